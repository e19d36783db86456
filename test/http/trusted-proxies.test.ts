import { createRequire } from 'node:module'
import { compile } from '@fastify/proxy-addr'
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { trustedProxies } from '../../src/http/trusted-proxies.js'

// docs/api.md R8.3 and R8.7: TRUST_PROXY is compiled once, by src/http/trusted-proxies.ts, and the function is given
// both to Fastify (X-Forwarded-For, -Proto, -Host) and to the connection guard (a proxy is not held to the cap of one
// address). These check that it trusts what Fastify's own compiling of the list would.

/** The @fastify/proxy-addr that Fastify itself loads: the one it compiles an array `trustProxy` with. */
const fastifysProxyAddr = createRequire(createRequire(import.meta.url).resolve('fastify'))(
  '@fastify/proxy-addr',
) as { compile: typeof compile }

/** [TRUST_PROXY entries, peer address, trusted] */
const CASES: ReadonlyArray<readonly [readonly string[], string, boolean]> = [
  // the names proxy-addr knows
  [['loopback'], '127.0.0.1', true],
  [['loopback'], '127.200.3.4', true],
  [['loopback'], '::1', true],
  [['loopback'], '128.0.0.1', false],
  [['loopback'], '10.0.0.1', false],
  [['linklocal'], '169.254.10.20', true],
  [['linklocal'], 'fe80::1', true],
  [['linklocal'], 'fe80::1%eth0', true],
  [['linklocal'], '169.255.0.1', false],
  [['uniquelocal'], '10.1.2.3', true],
  [['uniquelocal'], '172.16.0.1', true],
  [['uniquelocal'], '172.31.255.255', true],
  [['uniquelocal'], '172.32.0.1', false],
  [['uniquelocal'], '192.168.1.1', true],
  [['uniquelocal'], 'fd12:3456::1', true],
  [['uniquelocal'], '2001:db8::1', false],
  [['loopback', 'linklocal', 'uniquelocal'], '192.0.2.1', false],
  // CIDR ranges
  [['10.0.0.0/8'], '10.255.255.255', true],
  [['10.0.0.0/8'], '11.0.0.0', false],
  [['192.168.0.0/24'], '192.168.0.77', true],
  [['192.168.0.0/24'], '192.168.1.77', false],
  [['2001:db8::/32'], '2001:db8:1234::5', true],
  [['2001:db8::/32'], '2001:db9::5', false],
  [['2001:db8::/32'], '10.0.0.1', false],
  [['10.0.0.0/8', '2001:db8::/32'], '2001:db8::1', true],
  [['10.0.0.0/8', '2001:db8::/32'], '10.9.9.9', true],
  // single addresses
  [['127.0.0.3'], '127.0.0.3', true],
  [['127.0.0.3'], '127.0.0.4', false],
  [['192.0.2.1'], '192.0.2.1', true],
  [['::1'], '::1', true],
  [['::1'], '127.0.0.1', false],
  [['2001:db8::1'], '2001:db8::1', true],
  [['2001:db8::1'], '2001:db8::2', false],
  // IPv4-mapped IPv6 peers (a dual-stack socket) are taken as IPv4, and the other way round
  [['127.0.0.1'], '::ffff:127.0.0.1', true],
  [['loopback'], '::ffff:127.0.0.1', true],
  [['10.0.0.0/8'], '::ffff:10.1.2.3', true],
  [['10.0.0.0/8'], '::FFFF:10.1.2.3', true],
  [['10.0.0.0/8'], '::ffff:11.1.2.3', false],
  [['uniquelocal'], '::ffff:192.168.1.1', true],
  [['::ffff:10.0.0.1'], '10.0.0.1', true],
  [['::ffff:10.0.0.1'], '::ffff:10.0.0.1', true],
  [['::ffff:10.0.0.0/104'], '10.1.2.3', true],
  [['::ffff:10.0.0.0/104'], '::ffff:10.1.2.3', true],
  [['::ffff:10.0.0.0/104'], '11.1.2.3', false],
  // what is not an address is trusted by no list
  [['10.0.0.0/8'], 'not-an-address', false],
  [['10.0.0.0/8'], '', false],
]

describe('trusted proxies (TRUST_PROXY)', () => {
  it('R8.3 trusts named networks, CIDR ranges, single addresses and IPv4-mapped peers as Fastify would', () => {
    for (const [entries, address, trusted] of CASES) {
      const matcher = trustedProxies(entries)
      const fastifys = fastifysProxyAddr.compile([...entries])
      const which = `${entries.join(',')} ∋ ${address}`
      expect(matcher?.(address, 0), which).toBe(trusted)
      expect(fastifys(address, 0), which).toBe(trusted)
      // along X-Forwarded-For too: the hop does not change the answer
      expect(matcher?.(address, 3), which).toBe(trusted)
    }
  })

  it('uses the very @fastify/proxy-addr Fastify uses', () => {
    expect(fastifysProxyAddr.compile).toBe(compile)
  })

  it('trusts nothing when TRUST_PROXY is empty (null: Fastify is given false)', () => {
    expect(trustedProxies([])).toBeNull()
    expect(trustedProxies(Object.freeze([]))).toBeNull()
  })

  it('R8.3 gives Fastify the same request.ip, ips, protocol and host as the list itself did', async () => {
    const entries = Object.freeze(['10.0.0.0/8', '::1', 'linklocal'])
    const build = (trustProxy: string[] | ((address: string, hop: number) => boolean)) => {
      const app = Fastify({ trustProxy })
      app.get('/', (request) => ({
        ip: request.ip,
        ips: request.ips,
        protocol: request.protocol,
        host: request.host,
      }))
      return app
    }
    const withList = build([...entries])
    const matcher = trustedProxies(entries)
    if (matcher === null) throw new Error('a list of three compiles to a matcher')
    const withMatcher = build(matcher)
    const headers = {
      host: 'tessera.internal',
      'x-forwarded-for': '198.51.100.7, 10.0.0.9, 10.1.1.1',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'accounts.example',
    }
    try {
      for (const remoteAddress of [
        '10.2.3.4',
        '::ffff:10.2.3.4',
        '::1',
        'fe80::7',
        '192.0.2.5',
        '2001:db8::5',
      ]) {
        const answers = await Promise.all(
          [withList, withMatcher].map(async (app) =>
            (await app.inject({ method: 'GET', url: '/', remoteAddress, headers })).json(),
          ),
        )
        expect(answers[1], remoteAddress).toEqual(answers[0])
      }
      // and what they agree on is what R8.3 says: a trusted peer's X-Forwarded-* are believed, another's are not
      const from = (remoteAddress: string) =>
        withMatcher.inject({ method: 'GET', url: '/', remoteAddress, headers })
      expect((await from('10.2.3.4')).json()).toEqual({
        ip: '198.51.100.7',
        ips: ['10.2.3.4', '10.1.1.1', '10.0.0.9', '198.51.100.7'],
        protocol: 'https',
        host: 'accounts.example',
      })
      expect((await from('192.0.2.5')).json()).toEqual({
        ip: '192.0.2.5',
        ips: ['192.0.2.5'],
        protocol: 'http',
        host: 'tessera.internal',
      })
    } finally {
      await Promise.all([withList.close(), withMatcher.close()])
    }
  })
})
