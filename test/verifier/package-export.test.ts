import { describe, expect, it } from 'vitest'

// docs/client.md "Protect your own API": the verifier is exported from the package, and from `tessera/verifier` alone
// (the built package in dist/, which `npm test` builds first)

describe('the package exports the verifier', () => {
  it('from tessera/verifier, without the service, and from tessera', async () => {
    const alone = await import('tessera/verifier')
    const whole = await import('tessera')
    for (const name of [
      'createAccessTokenVerifier',
      'accessTokenPlugin',
      'createAccessTokenMiddleware',
    ] as const) {
      expect(typeof alone[name]).toBe('function')
      expect(whole[name]).toBe(alone[name])
    }
  })
})
