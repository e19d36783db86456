import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'

// A WebAuthn authenticator in software, for the service's passkey tests (docs/api.md §4.26): it makes ES256
// credentials and answers creation and request options as a browser's PublicKeyCredential.toJSON() would, with
// attestation `none`. Built here by hand from the specification (authenticator data, client data, a CBOR encoder),
// not with the service's verifier, so that a test checks the service against WebAuthn rather than against itself.
// Everything a browser would fix (the origin, the RP ID, the flags, the counter) a call may set otherwise, to make the
// responses a service must refuse.

/** A credential the authenticator holds: a discoverable one, with the user handle it was created for. */
export interface SoftwareCredential {
  id: string
  rpId: string
  /** base64url, as the options' user.id. */
  userHandle: string
  privateKey: KeyObject
  /** The COSE public key. */
  publicKey: Buffer
  /** The signature counter last reported: 0 at creation, one more at each assertion of a counting authenticator. */
  counter: number
}

/** What a call may set otherwise than a browser on `origin` would. */
export interface Tampering {
  /** The origin the client data names (default: the authenticator's). */
  origin?: string
  /** The RP ID whose hash the authenticator data carries (default: the options'). */
  rpId?: string
  /** The challenge the client data carries (default: the options'). */
  challenge?: string
  /** The user-verified flag (default true). */
  userVerified?: boolean
  /** The signature counter (default: the credential's, one more than the last for a counting authenticator). */
  counter?: number
  /** The credential to use (default: the only one for the RP ID; registration: a new one). */
  credential?: SoftwareCredential
  /** The client data's crossOrigin (default false). */
  crossOrigin?: boolean
}

const FLAG_UP = 0x01
const FLAG_UV = 0x04
const FLAG_BE = 0x08
const FLAG_BS = 0x10
const FLAG_AT = 0x40

export class SoftwareAuthenticator {
  readonly credentials: SoftwareCredential[] = []

  /** An authenticator in a browser on the page of `origin`; with `counting` false its counters stay 0. */
  constructor(
    readonly origin: string,
    readonly counting = true,
  ) {}

  /** navigator.credentials.create(options) then toJSON(): a new credential, kept. */
  create(options: any, tampering: Tampering = {}) {
    const rpId = tampering.rpId ?? options.rp.id
    const credential = tampering.credential ?? this.newCredential(rpId, options.user.id)
    const clientDataJSON = this.clientData('webauthn.create', options.challenge, tampering)
    const counter = tampering.counter ?? credential.counter
    const id = Buffer.from(credential.id, 'base64url')
    const attested = Buffer.concat([Buffer.alloc(16), u16(id.length), id, credential.publicKey])
    const authData = Buffer.concat([
      authenticatorData(rpId, FLAG_AT | flags(tampering) | FLAG_BE | FLAG_BS, counter),
      attested,
    ])
    const attestationObject = cbor(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    )
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal', 'hybrid'],
      },
    }
  }

  /** navigator.credentials.get(options) then toJSON(): an assertion by the discoverable credential of the RP ID. */
  get(options: any, tampering: Tampering = {}) {
    const rpId = tampering.rpId ?? options.rpId
    const credential = tampering.credential ?? this.only(options.rpId)
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, tampering)
    let counter = tampering.counter
    if (counter === undefined) {
      if (this.counting) credential.counter += 1
      counter = credential.counter
    }
    const authData = authenticatorData(rpId, flags(tampering) | FLAG_BE | FLAG_BS, counter)
    const signed = Buffer.concat([authData, createHash('sha256').update(clientDataJSON).digest()])
    // ES256: ECDSA over SHA-256, its signature DER-encoded (WebAuthn §6.5.6)
    const signature = sign('sha256', signed, credential.privateKey)
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: credential.userHandle,
      },
    }
  }

  private newCredential(rpId: string, userHandle: string): SoftwareCredential {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwk = publicKey.export({ format: 'jwk' })
    const credential: SoftwareCredential = {
      id: randomBytes(32).toString('base64url'),
      rpId,
      userHandle,
      privateKey,
      // RFC 9053 EC2 key: kty 2, alg -7 (ES256), crv 1 (P-256), x, y
      publicKey: cbor(
        new Map<number, unknown>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(jwk.x as string, 'base64url')],
          [-3, Buffer.from(jwk.y as string, 'base64url')],
        ]),
      ),
      counter: 0,
    }
    this.credentials.push(credential)
    return credential
  }

  private only(rpId: string): SoftwareCredential {
    const held = this.credentials.filter((credential) => credential.rpId === rpId)
    if (held.length !== 1) throw new Error(`${held.length} credentials for ${rpId}: name the one to use`)
    return held[0] as SoftwareCredential
  }

  private clientData(type: string, challenge: string, tampering: Tampering): Buffer {
    return Buffer.from(
      JSON.stringify({
        type,
        challenge: tampering.challenge ?? challenge,
        origin: tampering.origin ?? this.origin,
        crossOrigin: tampering.crossOrigin ?? false,
      }),
    )
  }
}

function flags(tampering: Tampering): number {
  return FLAG_UP | (tampering.userVerified === false ? 0 : FLAG_UV)
}

/** rpIdHash (32) | flags (1) | signCount (4, big-endian) (WebAuthn §6.1). */
function authenticatorData(rpId: string, flagBits: number, counter: number): Buffer {
  const count = Buffer.alloc(4)
  count.writeUInt32BE(counter)
  return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flagBits]), count])
}

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2)
  bytes.writeUInt16BE(value)
  return bytes
}

/** The CBOR (RFC 8949) of integers, byte and text strings and maps: what attestation and COSE keys need. */
export function cbor(value: unknown): Buffer {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error('integers only')
    return value >= 0 ? head(0, value) : head(1, -1 - value)
  }
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value])
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8')
    return Buffer.concat([head(3, bytes.length), bytes])
  }
  if (value instanceof Map) {
    const parts = [head(5, value.size)]
    for (const [key, item] of value) parts.push(cbor(key), cbor(item))
    return Buffer.concat(parts)
  }
  throw new Error(`no CBOR for ${typeof value}`)
}

function head(major: number, length: number): Buffer {
  const type = major << 5
  if (length < 24) return Buffer.from([type | length])
  if (length < 0x100) return Buffer.from([type | 24, length])
  if (length < 0x10000) return Buffer.concat([Buffer.from([type | 25]), u16(length)])
  const bytes = Buffer.alloc(5)
  bytes[0] = type | 26
  bytes.writeUInt32BE(length, 1)
  return bytes
}
