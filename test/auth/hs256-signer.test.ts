import { createDecoder, createSigner, createVerifier } from 'fast-jwt'
import { describe, expect, it } from 'vitest'
import { createHs256Signer } from '../../src/auth/hs256-signer.js'

const SECRET = 'a-secret-of-at-least-thirty-two-characters'
const claims = {
  sub: '1234567890',
  token_type: 'Refresh',
  iat: 1_795_243_148,
  exp: 1_795_243_148 + 604_800,
  jti: '3f1c2a4e-8d5b-4c1e-9f0a-1b2c3d4e5f60',
}

describe('createHs256Signer', () => {
  it('writes byte for byte what fast-jwt’s HS256 signer writes for the same claims', () => {
    const theirs = createSigner({ key: SECRET, algorithm: 'HS256' })
    const ours = createHs256Signer(SECRET)
    expect(ours(claims)).toBe(theirs(claims))
    const unicode = { ...claims, sub: 'ü€𝄞 "quoted" \\ slash' }
    expect(ours(unicode)).toBe(theirs(unicode))
  })

  it('makes a token fast-jwt verifies with the secret, with the header alg HS256 and typ JWT', () => {
    const token = createHs256Signer(SECRET)(claims)
    const verify = createVerifier({ key: SECRET, algorithms: ['HS256'], clockTimestamp: claims.iat * 1000 })
    expect(verify(token)).toEqual(claims)
    expect(createDecoder({ complete: true })(token).header).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]{43}$/)
  })

  it('a token signed with another secret does not verify', () => {
    const token = createHs256Signer(`${SECRET}-other`)(claims)
    const verify = createVerifier({ key: SECRET, algorithms: ['HS256'], clockTimestamp: claims.iat * 1000 })
    expect(() => verify(token)).toThrow(/signature/)
  })
})
