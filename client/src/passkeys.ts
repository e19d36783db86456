// The second entry point, `@tessera/client/passkeys` (dist/passkeys.js): the browser's WebAuthn ceremonies, for the
// `passkeys` option of createTesseraClient. Apart from the core, so that a page without passkeys does not load them;
// it imports nothing at run time (the build checks it), so a browser loads it as it is, beside dist/index.js.
import type { PasskeyCeremonies } from './second-factor.js'

/** RFC 4648's base64url, without padding, as WebAuthn's JSON forms write binary values. */
const base64url = (buffer: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(buffer)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=/g, '')

/** The bytes of a base64url value (atob takes base64 without its padding, as the HTML standard decodes it). */
const bytes = (text: string) =>
  Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (character) => character.charCodeAt(0))

/** A credential descriptor of the JSON form (`excludeCredentials`, `allowCredentials`) with its id as bytes. */
const descriptor = (credential: PublicKeyCredentialDescriptorJSON) =>
  ({ ...credential, id: bytes(credential.id) }) as PublicKeyCredentialDescriptor

/** What both ceremonies' credentials carry besides their response, in the JSON form. */
const credentialJson = (credential: PublicKeyCredential) => ({
  id: credential.id,
  rawId: base64url(credential.rawId),
  type: credential.type,
  authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
  clientExtensionResults: credential.getClientExtensionResults(),
})

/** The credential a ceremony resolved with; null (which no browser answers for a publicKey request) is a refusal. */
function publicKeyCredential(credential: Credential | null): PublicKeyCredential {
  if (credential === null) throw new DOMException('No credential was chosen', 'NotAllowedError')
  return credential as PublicKeyCredential
}

/**
 * The browser's WebAuthn ceremonies (`navigator.credentials`), for createTesseraClient's `passkeys` option: the
 * service's options, in the JSON form of WebAuthn Level 3 (binary values in base64url), turned into the browser's
 * binary ones, and the credential turned back into that JSON form (`RegistrationResponseJSON`,
 * `AuthenticationResponseJSON`). What the browser refuses (the person cancels its dialog, no passkey of this site is
 * on the device, a page that is not a secure context) rejects with its DOMException, as it is.
 */
export const passkeys: PasskeyCeremonies = {
  async create(options) {
    const credential = publicKeyCredential(
      await navigator.credentials.create({
        publicKey: {
          ...options,
          challenge: bytes(options.challenge),
          user: { ...options.user, id: bytes(options.user.id) },
          excludeCredentials: options.excludeCredentials?.map(descriptor),
        } as PublicKeyCredentialCreationOptions,
      }),
    )
    const response = credential.response as AuthenticatorAttestationResponse
    return {
      ...credentialJson(credential),
      response: {
        clientDataJSON: base64url(response.clientDataJSON),
        attestationObject: base64url(response.attestationObject),
        transports: response.getTransports(),
      },
    }
  },
  async get(options) {
    const credential = publicKeyCredential(
      await navigator.credentials.get({
        publicKey: {
          ...options,
          challenge: bytes(options.challenge),
          allowCredentials: options.allowCredentials?.map(descriptor),
        } as PublicKeyCredentialRequestOptions,
      }),
    )
    const response = credential.response as AuthenticatorAssertionResponse
    return {
      ...credentialJson(credential),
      response: {
        clientDataJSON: base64url(response.clientDataJSON),
        authenticatorData: base64url(response.authenticatorData),
        signature: base64url(response.signature),
        userHandle: response.userHandle === null ? undefined : base64url(response.userHandle),
      },
    }
  },
}

/**
 * Whether this browser can use passkeys at all (it has the WebAuthn API, in a secure context): a page shows its
 * passkey buttons only then. Whether the device has a passkey of this site is known only by asking.
 */
export function passkeysSupported(): boolean {
  return typeof PublicKeyCredential === 'function' && typeof navigator.credentials?.create === 'function'
}
