import { describe, expect, it } from 'vitest'
import { clientNetwork, coarseNetwork } from '../src/client-network.js'

// docs/api.md R8.2, R8.4 and R8.7: the client the login limits, the Argon2 queue and the connection caps count by

describe('clientNetwork', () => {
  it('counts IPv4 addresses one by one, IPv6 addresses by their /64, IPv4-mapped ones as IPv4', () => {
    expect(clientNetwork('192.0.2.1')).toBe('192.0.2.1')
    expect(clientNetwork('::ffff:198.51.100.7')).toBe('198.51.100.7')
    expect(clientNetwork('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64')
    expect(clientNetwork('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64')
    expect(clientNetwork('2001:DB8:0001:0002::7')).toBe('2001:db8:1:2::/64')
    expect(clientNetwork('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64')
    expect(clientNetwork('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(clientNetwork('::1')).toBe('0:0:0:0::/64')
    expect(clientNetwork('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(clientNetwork('64:ff9b::198.51.100.7')).toBe('64:ff9b:0:0::/64')
    expect(clientNetwork('not an address')).toBe('not an address')
  })
})

describe('coarseNetwork', () => {
  it('shows IPv4 addresses by their /24, IPv6 addresses by their /48, IPv4-mapped ones as IPv4, nothing else', () => {
    expect(coarseNetwork('192.0.2.77')).toBe('192.0.2.0/24')
    expect(coarseNetwork('::ffff:198.51.100.7')).toBe('198.51.100.0/24')
    expect(coarseNetwork('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1::/48')
    expect(coarseNetwork('2001:0DB8:00a0::1')).toBe('2001:db8:a0::/48')
    expect(coarseNetwork('::1')).toBe('::/48')
    expect(coarseNetwork('not an address')).toBeNull()
  })
})
