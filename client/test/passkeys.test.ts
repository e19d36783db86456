import { afterEach, describe, expect, it, vi } from 'vitest'
import { passkeys, passkeysSupported } from '../src/passkeys.js'

// The passkeys entry point's conversions between the service's JSON (binary values in base64url) and the browser's
// binary WebAuthn values, with a stand-in for navigator.credentials (Node has none). The real ceremonies, with
// Chromium's virtual authenticator and the service, are test/demo/passkeys.browser.test.ts's.

/** base64url of `bytes`, independently of the module under test (Node's Buffer). */
const b64url = (bytes: number[] | Uint8Array) => Buffer.from(bytes).toString('base64url')
/** The bytes a BufferSource holds. */
const bytesOf = (source: BufferSource) =>
  [...new Uint8Array(ArrayBuffer.isView(source) ? source.buffer.slice(source.byteOffset) : source)].slice(
    0,
    source.byteLength,
  )
/** An ArrayBuffer of `bytes`, as the browser's credential holds its values. */
const buffer = (bytes: number[]) => new Uint8Array(bytes).buffer

/** Bytes whose base64 has `+`, `/` and padding: what base64url must write otherwise. */
const AWKWARD = [0xfb, 0xff, 0xbf, 0x3e, 0x00]

afterEach(() => vi.unstubAllGlobals())

/** navigator.credentials, as a browser's: answers `credential` (its mock's calls say what it was asked). */
function standIn(credential: object | null) {
  const credentials = {
    create: vi.fn(async (_options: CredentialCreationOptions) => credential),
    get: vi.fn(async (_options: CredentialRequestOptions) => credential),
  }
  vi.stubGlobal('navigator', { credentials })
  return { credentials }
}

describe('passkeys.create', () => {
  it("turns the service's creation options into the browser's, and the new credential into the JSON form", async () => {
    const { credentials } = standIn({
      id: b64url([1, 2, 3]),
      rawId: buffer([1, 2, 3]),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      getClientExtensionResults: () => ({ credProps: { rk: true } }),
      response: {
        clientDataJSON: buffer(AWKWARD),
        attestationObject: buffer([9, 8, 7]),
        getTransports: () => ['internal', 'hybrid'],
      },
    })
    const json = await passkeys.create({
      rp: { id: 'example.com', name: 'Example' },
      user: { id: b64url([5, 6]), name: 'ada@example.com', displayName: 'ada@example.com' },
      challenge: b64url(AWKWARD),
      pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
      timeout: 60_000,
      excludeCredentials: [{ id: b64url([4, 4]), type: 'public-key', transports: ['internal'] }],
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      attestation: 'none',
      extensions: { credProps: true } as AuthenticationExtensionsClientInputsJSON,
    })
    const publicKey = credentials.create.mock.calls[0]?.[0].publicKey
    expect(publicKey).toBeDefined()
    if (!publicKey) return
    expect(bytesOf(publicKey.challenge)).toEqual(AWKWARD)
    expect(bytesOf(publicKey.user.id)).toEqual([5, 6])
    expect(publicKey.user.name).toBe('ada@example.com')
    expect(publicKey.rp).toEqual({ id: 'example.com', name: 'Example' })
    expect(publicKey.excludeCredentials?.map((credential) => bytesOf(credential.id))).toEqual([[4, 4]])
    expect(publicKey.excludeCredentials?.[0]?.transports).toEqual(['internal'])
    expect(publicKey.authenticatorSelection).toEqual({
      residentKey: 'required',
      userVerification: 'preferred',
    })
    expect(publicKey.extensions).toEqual({ credProps: true })
    expect(JSON.parse(JSON.stringify(json))).toEqual({
      id: b64url([1, 2, 3]),
      rawId: b64url([1, 2, 3]),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: { credProps: { rk: true } },
      response: {
        clientDataJSON: b64url(AWKWARD),
        attestationObject: b64url([9, 8, 7]),
        transports: ['internal', 'hybrid'],
      },
    })
    // no padding, and the URL-safe alphabet
    expect(b64url(AWKWARD)).toBe('-_-_PgA')
  })

  it('options without excludeCredentials stay without', async () => {
    const { credentials } = standIn({
      id: 'AQ',
      rawId: buffer([1]),
      type: 'public-key',
      authenticatorAttachment: null,
      getClientExtensionResults: () => ({}),
      response: { clientDataJSON: buffer([1]), attestationObject: buffer([2]), getTransports: () => [] },
    })
    const json = await passkeys.create({
      rp: { name: 'Example' },
      user: { id: 'AQ', name: 'a', displayName: 'a' },
      challenge: 'AQ',
      pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
    })
    expect(credentials.create.mock.calls[0]?.[0].publicKey?.excludeCredentials).toBeUndefined()
    // an attachment the browser does not know is left out of the JSON
    expect(JSON.parse(JSON.stringify(json))).not.toHaveProperty('authenticatorAttachment')
  })
})

describe('passkeys.get', () => {
  it("turns the service's request options into the browser's, and the assertion into the JSON form", async () => {
    const { credentials } = standIn({
      id: b64url([7]),
      rawId: buffer([7]),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      getClientExtensionResults: () => ({}),
      response: {
        clientDataJSON: buffer([1, 1]),
        authenticatorData: buffer(AWKWARD),
        signature: buffer([2, 2]),
        userHandle: buffer([3, 3]),
      },
    })
    const json = await passkeys.get({
      challenge: b64url([0, 255, 254]),
      rpId: 'example.com',
      userVerification: 'required',
      allowCredentials: [{ id: b64url([7]), type: 'public-key' }],
    })
    const publicKey = credentials.get.mock.calls[0]?.[0].publicKey
    expect(publicKey).toBeDefined()
    if (!publicKey) return
    expect(bytesOf(publicKey.challenge)).toEqual([0, 255, 254])
    expect(publicKey.rpId).toBe('example.com')
    expect(publicKey.userVerification).toBe('required')
    expect(publicKey.allowCredentials?.map((credential) => bytesOf(credential.id))).toEqual([[7]])
    expect(JSON.parse(JSON.stringify(json))).toEqual({
      id: b64url([7]),
      rawId: b64url([7]),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url([1, 1]),
        authenticatorData: b64url(AWKWARD),
        signature: b64url([2, 2]),
        userHandle: b64url([3, 3]),
      },
    })
  })

  it('a discoverable sign-in asks with no allowCredentials; an assertion without a user handle has none', async () => {
    const { credentials } = standIn({
      id: 'Bw',
      rawId: buffer([7]),
      type: 'public-key',
      authenticatorAttachment: null,
      getClientExtensionResults: () => ({}),
      response: {
        clientDataJSON: buffer([1]),
        authenticatorData: buffer([2]),
        signature: buffer([3]),
        userHandle: null,
      },
    })
    const json = await passkeys.get({ challenge: 'AA', userVerification: 'required' })
    expect(credentials.get.mock.calls[0]?.[0].publicKey?.allowCredentials).toBeUndefined()
    expect(JSON.parse(JSON.stringify(json)).response).not.toHaveProperty('userHandle')
  })

  it("the browser's refusal is its DOMException, as it is; no credential at all is a NotAllowedError", async () => {
    const cancelled = new DOMException(
      'The operation either timed out or was not allowed.',
      'NotAllowedError',
    )
    vi.stubGlobal('navigator', { credentials: { get: async () => Promise.reject(cancelled) } })
    await expect(passkeys.get({ challenge: 'AA' })).rejects.toBe(cancelled)
    standIn(null)
    await expect(passkeys.get({ challenge: 'AA' })).rejects.toMatchObject({ name: 'NotAllowedError' })
  })
})

describe('passkeysSupported', () => {
  it('is true only where there are PublicKeyCredential and navigator.credentials', () => {
    vi.stubGlobal('navigator', {})
    expect(passkeysSupported()).toBe(false)
    standIn(null)
    expect(passkeysSupported()).toBe(false)
    vi.stubGlobal('PublicKeyCredential', class {})
    expect(passkeysSupported()).toBe(true)
  })
})
