import { describe, expect, it } from 'vitest'
import { isLoopbackHost } from '../../src/config/server-config.js'

// The loopback test behind R5.7.1 and every "http only on a loopback address" rule: localhost, 127.0.0.0/8 or ::1, as
// a HOST or as a URL's hostname (IPv6 in brackets), and nothing that merely looks like them.
describe('isLoopbackHost', () => {
  it.each([
    'localhost',
    'LOCALHOST',
    '127.0.0.1',
    '127.255.0.9',
    '::1',
    '[::1]',
    '::ffff:127.0.0.1',
    '[::ffff:127.0.0.1]',
  ])('%s is a loopback host', (host) => {
    expect(isLoopbackHost(host)).toBe(true)
  })

  it.each([
    'example.com',
    '127.example.com',
    '127.0.0.1.example.com',
    '128.0.0.1',
    '1270.0.0.1',
    '0.0.0.0',
    '::',
    '10.0.0.1',
    '::ffff:10.0.0.1',
    'localhost.example.com',
  ])('%s is not', (host) => {
    expect(isLoopbackHost(host)).toBe(false)
  })
})
