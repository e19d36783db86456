import { randomBytes } from 'node:crypto'
import type { Session } from '../auth/account.js'
import type { OneTimeTickets } from '../auth/one-time-tickets.js'
import type { StartSession } from '../auth/session-starter.js'
import type { Clock } from '../clock.js'
import { isLocalhostOrigin, type RelyingParty } from '../config/mfa-config.js'
import {
  AccessTokenInvalidError,
  InvalidCredentialsError,
  PasskeyNotVerifiedError,
  PasskeyRefusedError,
  PasskeyTakenError,
  SecondFactorInvalidError,
  ValidationError,
} from '../errors.js'
import { normalizeNickname } from '../profile/profile-rules.js'
import type { RecordSecurityEvent, RequestContext } from '../security-event.js'
import type { Caller } from '../sessions/session-service.js'
import type { FactorStore, StoredFactor, UserStore } from '../storage/stores.js'
import type { FactorView, HolderProof, MfaService } from './mfa-service.js'

/**
 * How long a ceremony's challenge is good, and the `timeout` its options ask of the browser: five minutes, the
 * WebAuthn recommendation when user verification may be asked, and the lifetime of a second-factor challenge.
 */
export const CEREMONY_TTL_MS = 5 * 60_000
/** The name a passkey gets when the request gives none. */
export const DEFAULT_PASSKEY_NAME = 'Passkey'
/** The key algorithms offered and accepted: EdDSA, ES256, RS256 (COSE), each of a public key the store can keep. */
const ALGORITHMS = [-8, -7, -257]
/** The store's bounds (storage/stores.ts StoredFactor): a credential id and a COSE key as base64url. */
const CREDENTIAL_ID_MAX = 1366
const PUBLIC_KEY_MAX = 2048
/** The transports a browser reports (WebAuthn's AuthenticatorTransport), the only ones kept: at most 255 as JSON. */
const TRANSPORTS = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']

/** What a ceremony's ticket holds (a `passkey_challenge` of OneTimeTickets): the challenge, and whose it is. */
type Ceremony =
  | { ceremony: 'registration'; challenge: string; userId: string }
  | { ceremony: 'login'; challenge: string }

/** A ceremony's start: the ticket its verify takes back, and the options for the browser, as JSON. */
export interface CeremonyStart {
  ticket: string
  /**
   * PublicKeyCredentialCreationOptionsJSON (registration) or PublicKeyCredentialRequestOptionsJSON (login), for
   * PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON.
   */
  options: Readonly<Record<string, unknown>>
}

export interface PasskeyServiceDeps {
  users: Pick<UserStore, 'findById'>
  factors: Pick<FactorStore, 'list' | 'add' | 'findPasskey' | 'usePasskey'>
  tickets: OneTimeTickets
  mfa: Pick<MfaService, 'enrolling' | 'added' | 'completeWithPasskey' | 'refusePasskey'>
  startSession: StartSession
  relyingParty: RelyingParty
  clock: Clock
  record: RecordSecurityEvent
}

/**
 * Passkeys (docs/api.md §4.26): WebAuthn registration and sign-in by discoverable credentials, verified by
 * `@simplewebauthn/server` (loaded at the first ceremony). A passkey is a factor of the second-factor store: it
 * completes a second-factor challenge of its account, or signs in by itself with user verification (two factors in
 * one: the device and its PIN or biometric). Each ceremony's challenge is a one-time ticket, taken once by its verify,
 * on whichever instance: a replayed challenge finds none.
 */
export interface PasskeyService {
  /**
   * POST /auth/passkeys/register/options: with the holder's proof and a verified address (MfaService.enrolling), the
   * creation options for the caller's account (a resident key, user verification preferred, the account's passkeys
   * excluded) and the ticket of their challenge.
   */
  registrationOptions(caller: Caller, proof: HolderProof, context: RequestContext): Promise<CeremonyStart>
  /**
   * POST /auth/passkeys/register/verify: verifies the browser's RegistrationResponseJSON against the ticket's
   * challenge, the relying party and its origins, and stores the passkey (MfaService.added then marks the caller's
   * session, ends the others and mails a notice). PasskeyNotVerifiedError for a ticket unknown, used, expired or
   * another account's, or a credential that does not verify; PasskeyTakenError for a credential stored already.
   * `name` (null: DEFAULT_PASSKEY_NAME) is normalized as a nickname is: ValidationError naming `/name` when it breaks
   * the rule, before the ticket is used.
   */
  register(
    caller: Caller,
    ticket: string,
    credential: Readonly<Record<string, unknown>>,
    name: string | null,
    context: RequestContext,
  ): Promise<FactorView>
  /**
   * POST /auth/passkeys/login/options: request options without allowCredentials (a discoverable credential names its
   * account), user verification `required` for a sign-in by the passkey alone, `preferred` for a second step.
   */
  loginOptions(secondStep: boolean): Promise<CeremonyStart>
  /**
   * POST /auth/passkeys/login/verify: verifies the browser's AuthenticationResponseJSON against the ticket's challenge
   * and the passkey it names, keeps the passkey's counter and backed-up flag, and starts a session established with
   * the second factor: by the passkey alone (user verification required) when `mfaTicket` is null, else by completing
   * that challenge, whose account the passkey must be. Every refusal is PasskeyRefusedError; a counter that went
   * backwards is recorded (`passkey_counter_regressed`).
   */
  login(
    ticket: string,
    credential: Readonly<Record<string, unknown>>,
    mfaTicket: string | null,
    context: RequestContext,
  ): Promise<Session>
}

const KIND = 'passkey_challenge'
/** How many times an assertion's counter update is tried against concurrent ones of the same passkey. */
const COUNTER_TRIES = 3

type WebAuthnLibrary = typeof import('@simplewebauthn/server')
let library: Promise<WebAuthnLibrary> | null = null
/** @simplewebauthn/server, loaded by the first ceremony: a start that serves none does not pay for it. */
const webauthn = () => {
  library ??= import('@simplewebauthn/server')
  return library
}

export function createPasskeyService(deps: PasskeyServiceDeps): PasskeyService {
  const { users, factors, tickets, mfa, relyingParty: rp, clock, record } = deps

  const newCeremony = async (ceremony: Ceremony) => {
    const expiresAt = clock.now() + CEREMONY_TTL_MS
    return tickets.put(KIND, ceremony, expiresAt)
  }

  const takeCeremony = async (ticket: string): Promise<Ceremony | null> => {
    const value = await tickets.take(KIND, ticket)
    if (value === null || typeof value.challenge !== 'string') return null
    if (value.ceremony === 'login') return { ceremony: 'login', challenge: value.challenge }
    if (value.ceremony === 'registration' && typeof value.userId === 'string')
      return { ceremony: 'registration', challenge: value.challenge, userId: value.userId }
    return null
  }

  /**
   * The origins a response may come from: the relying party's, and outside production with none configured, the
   * localhost origin the response names (whatever its port). A response from inside a cross-origin frame is from no
   * accepted origin: a page of another site that frames ours must not collect its passkeys' assertions.
   */
  const expectedOrigins = (credential: Readonly<Record<string, unknown>>): string[] => {
    const client = clientData(credential)
    if (client === null || client.crossOrigin === true) return []
    if (rp.anyLocalhostPort && isLocalhostOrigin(client.origin)) return [...rp.origins, client.origin]
    return [...rp.origins]
  }

  const view = (factor: StoredFactor): FactorView => ({
    id: factor.id,
    type: factor.type,
    name: factor.name,
    createdAt: new Date(factor.createdAt).toISOString(),
    lastUsedAt: factor.lastUsedAt === null ? null : new Date(factor.lastUsedAt).toISOString(),
  })

  /**
   * Records an assertion's counter on the passkey (a compare-and-swap against the counter the assertion was checked
   * with): false when the counter went backwards, or did not move while either is non-zero (WebAuthn §7.2 step 21, a
   * cloned authenticator), now or after a concurrent assertion of the same passkey moved it.
   */
  const keepCounter = async (factor: StoredFactor, next: number, backedUp: boolean): Promise<boolean> => {
    let stored: StoredFactor | null = factor
    for (let tries = 0; tries < COUNTER_TRIES && stored !== null; tries += 1) {
      if ((next > 0 || stored.counter > 0) && next <= stored.counter) return false
      if (await factors.usePasskey(stored.id, stored.counter, next, backedUp, clock.now())) return true
      stored = await factors.findPasskey(factor.credentialId as string)
    }
    return false
  }

  const service: PasskeyService = {
    async registrationOptions(caller, proof, context) {
      const user = await mfa.enrolling(caller, proof, context)
      const passkeys = (await factors.list(user.id)).filter(
        (factor) => factor.type === 'passkey' && factor.credentialId !== null,
      )
      const { generateRegistrationOptions } = await webauthn()
      const options = await generateRegistrationOptions({
        rpName: rp.name,
        rpID: rp.id,
        userName: user.email,
        userID: Buffer.from(user.id, 'utf8'),
        userDisplayName: user.nickname ?? user.email,
        timeout: CEREMONY_TTL_MS,
        attestationType: 'none',
        excludeCredentials: passkeys.map((factor) => ({
          id: factor.credentialId as string,
          transports: [...factor.transports],
        })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
        supportedAlgorithmIDs: ALGORITHMS,
      })
      const ticket = await newCeremony({
        ceremony: 'registration',
        challenge: options.challenge,
        userId: user.id,
      })
      return { ticket, options: options as unknown as Record<string, unknown> }
    },

    async register(caller, ticket, credential, givenName, context) {
      const name = passkeyName(givenName)
      const ceremony = await takeCeremony(ticket)
      if (ceremony === null || ceremony.ceremony !== 'registration' || ceremony.userId !== caller.userId)
        throw new PasskeyNotVerifiedError()
      const { verifyRegistrationResponse } = await webauthn()
      let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>
      try {
        verified = await verifyRegistrationResponse({
          response: credential as unknown as Parameters<typeof verifyRegistrationResponse>[0]['response'],
          expectedChallenge: ceremony.challenge,
          expectedOrigin: expectedOrigins(credential),
          expectedRPID: rp.id,
          // preferred at registration (§4.26): a passkey without it still serves as a second step
          requireUserVerification: false,
          supportedAlgorithmIDs: ALGORITHMS,
        })
      } catch {
        throw new PasskeyNotVerifiedError()
      }
      const info = verified.registrationInfo
      if (!verified.verified || info === undefined) throw new PasskeyNotVerifiedError()
      const publicKey = Buffer.from(info.credential.publicKey).toString('base64url')
      if (info.credential.id.length > CREDENTIAL_ID_MAX || publicKey.length > PUBLIC_KEY_MAX)
        throw new PasskeyNotVerifiedError()
      const factor: StoredFactor = {
        id: randomBytes(16).toString('hex'),
        userId: caller.userId,
        type: 'passkey',
        name,
        confirmed: true,
        secret: null,
        lastStep: null,
        credentialId: info.credential.id,
        publicKey,
        counter: info.credential.counter,
        backedUp: info.credentialBackedUp,
        transports: TRANSPORTS.filter((transport) =>
          (info.credential.transports as readonly string[] | undefined)?.includes(transport),
        ),
        createdAt: clock.now(),
        lastUsedAt: null,
      }
      const added = await factors.add(factor)
      if (added === 'taken') throw new PasskeyTakenError()
      if (added === 'missing') throw new AccessTokenInvalidError()
      await mfa.added(caller, factor, context)
      return view(factor)
    },

    async loginOptions(secondStep) {
      const { generateAuthenticationOptions } = await webauthn()
      const options = await generateAuthenticationOptions({
        rpID: rp.id,
        timeout: CEREMONY_TTL_MS,
        userVerification: secondStep ? 'preferred' : 'required',
      })
      const ticket = await newCeremony({ ceremony: 'login', challenge: options.challenge })
      return { ticket, options: options as unknown as Record<string, unknown> }
    },

    async login(ticket, credential, mfaTicket, context) {
      /** Every refusal: a second step's try is used up, a sign-in's failure recorded; one answer for all. */
      const refuse = async (userId: string | null, reason: 'passkey' | 'disabled' = 'passkey') => {
        if (mfaTicket === null) record('login_failed', userId, context, reason)
        else await mfa.refusePasskey(mfaTicket, context)
        return new PasskeyRefusedError()
      }
      const ceremony = await takeCeremony(ticket)
      if (ceremony === null || ceremony.ceremony !== 'login') throw await refuse(null)
      const credentialId = typeof credential.id === 'string' ? credential.id : ''
      const factor = credentialId === '' ? null : await factors.findPasskey(credentialId)
      if (factor === null || factor.publicKey === null || !factor.confirmed) throw await refuse(null)
      const { verifyAuthenticationResponse } = await webauthn()
      let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>
      try {
        verified = await verifyAuthenticationResponse({
          response: credential as unknown as Parameters<typeof verifyAuthenticationResponse>[0]['response'],
          expectedChallenge: ceremony.challenge,
          expectedOrigin: expectedOrigins(credential),
          expectedRPID: rp.id,
          credential: {
            id: credentialId,
            publicKey: Buffer.from(factor.publicKey, 'base64url'),
            // the counter is compared below (keepCounter), once the signature is known good, so that a regression is
            // told apart from a forgery and recorded
            counter: 0,
            transports: [...factor.transports] as never,
          },
          // a sign-in by the passkey alone is two factors only with the authenticator's PIN or biometric (§4.26)
          requireUserVerification: mfaTicket === null,
        })
      } catch {
        throw await refuse(factor.userId)
      }
      if (!verified.verified) throw await refuse(factor.userId)
      // a discoverable credential names its account: it must be the one the passkey was registered to
      const handle = userHandle(credential)
      if (handle !== null && handle !== Buffer.from(factor.userId, 'utf8').toString('base64url'))
        throw await refuse(factor.userId)
      const { newCounter, credentialBackedUp } = verified.authenticationInfo
      if (!(await keepCounter(factor, newCounter, credentialBackedUp))) {
        record('passkey_counter_regressed', factor.userId, context)
        throw await refuse(factor.userId)
      }
      if (mfaTicket !== null) {
        try {
          return await mfa.completeWithPasskey(mfaTicket, factor.userId, context)
        } catch (error) {
          if (error instanceof SecondFactorInvalidError) throw new PasskeyRefusedError()
          throw error
        }
      }
      const user = await users.findById(factor.userId)
      if (user === null || user.status !== 'active') throw await refuse(factor.userId, 'disabled')
      let session: Session
      try {
        session = await deps.startSession(user, context, { secondFactor: true })
      } catch (error) {
        // disabled or deleted since it was read
        if (error instanceof InvalidCredentialsError) throw await refuse(factor.userId, 'disabled')
        throw error
      }
      record('login_succeeded', user.id, context, 'passkey')
      return session
    },
  }
  return service
}

/** The name a passkey is stored with: DEFAULT_PASSKEY_NAME, or the one given under the rule of a nickname. */
function passkeyName(name: string | null): string {
  if (name === null) return DEFAULT_PASSKEY_NAME
  // a name is shown in the factor list and in the notice mail: no controls, nothing that hides or reorders text
  const normalized = normalizeNickname(name)
  if (typeof normalized !== 'string') throw new ValidationError([{ ...normalized, field: '/name' }])
  return normalized
}

/** The origin and crossOrigin of a response's clientDataJSON, or null when it is not a JSON object with an origin. */
function clientData(
  credential: Readonly<Record<string, unknown>>,
): { origin: string; crossOrigin: unknown } | null {
  const response = credential.response
  if (typeof response !== 'object' || response === null) return null
  const encoded = (response as Record<string, unknown>).clientDataJSON
  if (typeof encoded !== 'string') return null
  try {
    const value: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'))
    if (typeof value !== 'object' || value === null) return null
    const { origin, crossOrigin } = value as Record<string, unknown>
    return typeof origin === 'string' ? { origin, crossOrigin } : null
  } catch {
    return null
  }
}

/** The userHandle of an assertion (base64url), or null when it has none. */
function userHandle(credential: Readonly<Record<string, unknown>>): string | null {
  const response = credential.response
  if (typeof response !== 'object' || response === null) return null
  const handle = (response as Record<string, unknown>).userHandle
  return typeof handle === 'string' && handle !== '' ? handle : null
}
