import {
  type Account,
  type Credentials,
  type ProfileChanges,
  type Registration,
  toAccount,
} from './account.js'
import { camelCased } from './camel-cased.js'
import type { CodeRequest, DeletionProof } from './email-code.js'
import { readEnvelope } from './envelope.js'
import { type PopupOpener, type ProviderLoginOptions, providerResult } from './provider-popup.js'
import { isMarkedReplaced, markReplaced, type RefreshLocks, withRefreshLock } from './refresh-lock.js'
import type {
  Factor,
  HolderProof,
  MfaChallenge,
  PasskeyCeremonies,
  SecondFactorProof,
  SignIn,
  TotpSetup,
} from './second-factor.js'
import { type LogoutScope, type Session, toSessions } from './session.js'
import { TesseraError } from './tessera-error.js'
import {
  createMemoryStorage,
  createTokenStore,
  otherTabWrite,
  type TokenPair,
  type TokenStorage,
} from './token-store.js'

/** Why the client discarded its tokens. */
export type SessionEndReason =
  /** The service refused the refresh token (spec 5.6): used up, expired, or the account logged in elsewhere. */
  | 'refresh_refused'
  /** `logout()` of this client. */
  | 'logout'
  /** Another client sharing the storage (another tab) logged out or discarded them. */
  | 'ended_elsewhere'
  /** `deleteAccount()` of this client: the account is gone. */
  | 'account_deleted'

export interface TesseraClientOptions {
  /** Where the service answers, e.g. `https://auth.example.com`; `''` for the page's own origin. */
  baseUrl: string
  /**
   * Where the token pair is kept: `localStorage` (survives reloads, shared by the tabs of an origin) or
   * `sessionStorage`; by default this client's memory (gone on reload, out of reach of other scripts' storage reads).
   */
  storage?: TokenStorage
  /** The storage key of the pair; `tessera.tokens` by default. */
  storageKey?: string
  /** The fetch to use; the global one by default. */
  fetch?: (input: Request) => Promise<Response>
  /** Called once each time the client discards its tokens, after it has done so. */
  onSessionEnd?: (reason: SessionEndReason) => void
  /** The Web Locks API that serializes refreshes across tabs: `navigator.locks` by default; null for none. */
  locks?: RefreshLocks | null
  /** How long a refresh waits for another tab's refresh before going on without the lock; 10 s by default. */
  lockTimeoutMs?: number
  /**
   * The WebAuthn ceremonies that `registerPasskey` and `loginWithPasskey` need: `passkeys` of
   * `@tessera/client/passkeys`, the browser's own. Without them, those two reject with a TypeError.
   */
  passkeys?: PasskeyCeremonies
}

export interface TesseraClient {
  /**
   * `POST /auth/register`: creates the account and logs in with it (docs/api.md R4.3.1). With the `code` mailed for
   * the purpose `register`, the address is verified at once; a refused code is a TesseraError 400.
   */
  register(registration: Registration): Promise<Account>
  /**
   * `POST /auth/login`. A wrong password is a TesseraError 401 and never causes a refresh. For an account with a
   * second factor, it resolves with the challenge (`mfaRequired: true`) and stores no tokens: `verifyMfa` completes
   * it. So do `loginWithCode`, `resetPassword`, `loginWithProvider` and `exchangeProviderCode`.
   */
  login(credentials: Credentials): Promise<SignIn>
  /**
   * Asks the service to mail a six-digit code. A public purpose (`register`, `login`, `reset_password`) names the
   * address, `POST /auth/email/send-code`, and needs no login: the answer is the same whether or not the address has
   * an account. The account's purposes are protected calls (`POST /auth/me/send-code`, refreshing once on a 401):
   * `verify_email`, `delete_account` and `manage_factors` mail the account's address, `change_email` the new one.
   * Asked again too soon or too often: a TesseraError 429 whose `retryAfter` says how long to wait; a service that
   * cannot send mail: 503.
   */
  sendCode(request: CodeRequest): Promise<void>
  /**
   * `POST /auth/login/email-code`: logs in with a code mailed for the purpose `login`. A wrong, expired or used code
   * is the same TesseraError 401 as a wrong password, and never causes a refresh.
   */
  loginWithCode(email: string, code: string): Promise<SignIn>
  /**
   * `POST /auth/password/reset`: sets a new password with a code mailed for the purpose `reset_password`, and logs in.
   * The service ends every other session of the account. A refused code is a TesseraError 400. For an account with a
   * second factor, the password is set and the sessions end all the same, but it resolves with the challenge.
   */
  resetPassword(email: string, code: string, newPassword: string): Promise<SignIn>
  /**
   * `POST /auth/password/change`, a protected call: the service ends every other session of the account and answers
   * a new pair, which the client keeps. A wrong current password is a TesseraError 400 (`Password is incorrect`),
   * which leaves the session as it is.
   */
  changePassword(currentPassword: string, newPassword: string): Promise<Account>
  /** `POST /auth/email/change`, a protected call, with the code mailed to the new address (purpose `change_email`). */
  changeEmail(newEmail: string, code: string): Promise<Account>
  /** `POST /auth/email/verify`, a protected call, with the code mailed for the purpose `verify_email`. */
  verifyEmail(code: string): Promise<Account>
  /**
   * `POST /auth/delete`, a protected call: deletes the account, confirmed by its password or by a code mailed for the
   * purpose `delete_account`; then discards the tokens (`onSessionEnd('account_deleted')`). A refusal (a wrong
   * password or code: 400) or no answer keeps them.
   */
  deleteAccount(proof: DeletionProof): Promise<void>
  /** `GET /auth/me`, refreshing once on a 401. */
  me(): Promise<Account>
  /**
   * `PUT /auth/profile`, a protected call: sets the fields given (null clears one; one left out stays as it is) and
   * resolves with the account as it now is. A username another account has is a TesseraError 409; a value refused is
   * a 400 naming its field (`/username`, `/nickname`, `/bio`).
   */
  updateProfile(changes: ProfileChanges): Promise<Account>
  /**
   * `POST /auth/avatar`, a protected call: uploads the image (JPEG, PNG or WebP, at most 2 MB) as the field `avatar`
   * of a multipart form, named `filename` when given; resolves with the account and its new `avatarUrl`. Too large:
   * a TesseraError 413; another type: 415.
   */
  uploadAvatar(file: Blob, filename?: string): Promise<Account>
  /** `DELETE /auth/avatar`, a protected call: resolves with the account, whose `avatarUrl` is null. */
  removeAvatar(): Promise<Account>
  /** `GET /auth/oauth/providers`: the names of the providers the service signs in with (`google`, …); no login. */
  providers(): Promise<string[]>
  /**
   * Signs in with a provider in a popup (`<baseUrl>/auth/oauth/<provider>/start`), and resolves with the account,
   * logged in as by `login` (or, for an account with a second factor, with its challenge). The popup is opened at
   * once, before anything is awaited: call it from the click that asks for it, or the browser blocks the popup (a
   * TesseraError 0). The answer is the message that the service's callback page posts: only one from the service's
   * origin and from this popup counts. A sign-in the service refused (the user declined at the provider, say) is a
   * TesseraError 401 with the service's message; a popup closed without an answer, or no answer within `timeoutMs`
   * (120 s), a TesseraError 0, and the popup is closed.
   */
  loginWithProvider(provider: string, options?: ProviderLoginOptions): Promise<SignIn>
  /**
   * Starts a sign-in without a popup, back to `redirectTo` (a page of the service's FRONTEND_ORIGIN): makes a PKCE
   * verifier with Web Crypto (a secure context: HTTPS or localhost), keeps it in the tab's `sessionStorage` (this
   * client's memory where there is none) for `exchangeProviderCode`, and resolves with
   * `<baseUrl>/auth/oauth/<provider>/start?redirect_to=…&code_challenge=<its S256 challenge>`, where the page goes
   * next (`location.assign(url)`).
   */
  providerRedirectUrl(provider: string, redirectTo: string): Promise<string>
  /**
   * `POST /auth/oauth/exchange`: logs in with the one-time `code` that a sign-in started by `providerRedirectUrl` in
   * this tab added to `redirectTo`, sending the verifier kept for it (forgotten once the code is exchanged), and
   * resolves as `login` does (the challenge, for an account with a second factor). The code of a sign-in that this
   * tab did not start (a link someone sent) is refused as a used one: a TesseraError 400.
   */
  exchangeProviderCode(code: string): Promise<SignIn>
  /**
   * `POST /auth/mfa/verify`: completes the challenge of a first factor with the six digits of the authenticator app
   * (`{ code }`) or one of the recovery codes (`{ recoveryCode }`), and resolves with the account, logged in as by
   * `login`. Any refusal (a wrong or replayed code, a used, expired or worn-out ticket) is one TesseraError 401,
   * `Second factor invalid or expired`, which never causes a refresh; after five wrong tries, or five minutes, the
   * ticket is spent and the sign-in starts again from its first factor.
   */
  verifyMfa(mfaTicket: string, proof: SecondFactorProof): Promise<Account>
  /**
   * `POST /auth/mfa/totp/setup`, a protected call: starts adding an authenticator app, proved by the password or a
   * code mailed for the purpose `manage_factors`, and resolves with what the app needs (the QR code, its URI and the
   * secret). A wrong password or code is a TesseraError 400; an address not verified yet, a 403.
   */
  setupTotp(proof: HolderProof): Promise<TotpSetup>
  /**
   * `POST /auth/mfa/totp/confirm`, a protected call: the app's current six digits confirm the factor of `setupTotp`.
   * Resolves with the ten recovery codes, each good once, which the service shows this once. From then on, every
   * first factor of the account asks for the second step; this session counts as established with both, and every
   * other session of the account has ended. A code that is not the app's is a TesseraError 400.
   */
  confirmTotp(factorId: string, code: string): Promise<string[]>
  /** `GET /auth/mfa/factors`, a protected call: the account's confirmed factors, oldest first. */
  factors(): Promise<Factor[]>
  /**
   * `DELETE /auth/mfa/factors/<id>`, a protected call: removes the factor (the last one turns the second step off and
   * voids the recovery codes) and ends every other session of the account. A session not established with the second
   * factor is refused with a TesseraError 403 (`Second factor required`): log in again with it.
   */
  removeFactor(id: string): Promise<void>
  /**
   * `POST /auth/mfa/recovery-codes`, a protected call: ten new recovery codes, shown this once; the old ones no
   * longer work. Needs a session established with the second factor, as `removeFactor` does.
   */
  newRecoveryCodes(): Promise<string[]>
  /**
   * Adds a passkey, a protected call: `POST /auth/passkeys/register/options` with the proof (as `setupTotp` takes
   * it), the browser's ceremony with its options (the `passkeys` option), and `POST /auth/passkeys/register/verify`
   * with the new credential and the options' ticket, named `name` when given (1 to 64 characters; the service's
   * default is `Passkey`). Resolves with the new factor; this session counts as established with the second factor,
   * and every other session of the account has ended. A person who cancels the browser's dialog is the browser's
   * DOMException (`NotAllowedError`), as it is.
   */
  registerPasskey(proof: HolderProof, name?: string): Promise<Factor>
  /**
   * Signs in with a passkey (`POST /auth/passkeys/login/options`, the browser's ceremony, then
   * `POST /auth/passkeys/login/verify`), and resolves with the account, logged in as by `login`. Without
   * `mfaTicket`, it needs no address: the person picks one of the passkeys this site has on the device, which is
   * both factors at once. With the `mfaTicket` of a challenge, it completes that challenge, with a passkey of that
   * account. A refused assertion is a TesseraError 401 that never causes a refresh.
   */
  loginWithPasskey(mfaTicket?: string): Promise<Account>
  /** The names of the providers linked to the account: `GET /auth/me`'s `providers`. */
  linkedProviders(): Promise<string[]>
  /**
   * `DELETE /auth/oauth/<provider>`, a protected call: unlinks the account's account at the provider, and resolves
   * with the account as it now is. Not linked: a TesseraError 404. The service refuses with a 409 to unlink the
   * account's only way in (no password and no other provider).
   */
  unlinkProvider(provider: string): Promise<Account>
  /**
   * `POST /auth/delete-refresh-token` (refreshing first if the access token is refused), then discards the tokens,
   * even when the service cannot be reached. Without a scope, never rejects.
   *
   * A `scope` ends other devices' sessions as well (`?scope=`): `others` the account's other sessions, keeping this
   * one and its tokens; `all` every session, this one included, after which the tokens are discarded as above. Its
   * point being the other devices, a scoped logout that the service did not confirm rejects with the TesseraError:
   * the other sessions may still be going.
   */
  logout(options?: { scope?: LogoutScope }): Promise<void>
  /** `GET /auth/sessions`, refreshing once on a 401: the account's sessions, most recently used first. */
  sessions(): Promise<Session[]>
  /**
   * `DELETE /auth/sessions/<id>`, refreshing once on a 401: ends that session, whose device must log in again.
   * An id that is not one of the account's sessions is a TesseraError 404. This client's own session is ended by
   * `logout()`, which also discards the tokens.
   */
  endSession(id: string): Promise<void>
  /**
   * A protected call: `fetch` with `Authorization: Bearer <access token>`. On a 401, one refresh and one retry
   * with the same method, headers and body. A string starting with `/` is relative to `baseUrl`. Any answer is
   * returned as a Response; no answer at all rejects with a retryable TesseraError of status 0.
   */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>
  /** The access token stored now, or null. */
  getAccessToken(): string | null
  isLoggedIn(): boolean
  /** `listener(loggedIn)` after every change of the stored pair seen by this client; returns the unsubscribe. */
  onChange(listener: (loggedIn: boolean) => void): () => void
}

/** A token pair as the API names it, in the answers of login and refresh (docs/api.md 2.2). */
interface PairData {
  access_token: string
  refresh_token: string
}

/** A first factor's challenge as the API names it (docs/api.md §4.25). */
interface ChallengeData {
  mfa_required: true
  mfa_ticket: string
  factors: string[]
}

/** RFC 4648's base64url without padding: a PKCE verifier and its challenge (RFC 7636). */
const base64url = (bytes: ArrayBuffer | Uint8Array) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=/g, '')

const toPair = (data: PairData): TokenPair => ({
  accessToken: data.access_token,
  refreshToken: data.refresh_token,
})

/**
 * A client of one Tessera service. Each client keeps its own state: two clients never share tokens unless they are
 * given the same storage (which is how tabs share a session).
 */
export function createTesseraClient(options: TesseraClientOptions): TesseraClient {
  const root = options.baseUrl.replace(/\/+$/, '')
  // an absolute base: the avatars' paths are made absolute with it, and the popup's answer must come from its origin
  const base = root.includes(':') ? root : ''
  const account = (data: unknown) => toAccount(data, base)
  const send = options.fetch ?? ((request: Request) => fetch(request))
  const key = options.storageKey ?? 'tessera.tokens'
  const lockTimeoutMs = options.lockTimeoutMs ?? 10_000
  const tokens = createTokenStore(options.storage ?? createMemoryStorage(), key)
  // only a storage that can be shared needs the lock across tabs
  const lockName = options.storage && `tessera-refresh ${key}`
  const locks =
    options.locks === undefined
      ? (globalThis as { navigator?: { locks?: RefreshLocks } }).navigator?.locks
      : options.locks
  const verifierKey = `${key}.pkce`
  const verifierMemory = createMemoryStorage()
  /**
   * Where the PKCE verifier waits out the redirect: the tab's sessionStorage, looked up only when a sign-in needs it
   * (an opaque origin's throws); this client's memory where there is none.
   */
  const verifiers = () => (globalThis as { sessionStorage?: TokenStorage }).sessionStorage ?? verifierMemory
  const listeners = new Set<(loggedIn: boolean) => void>()
  let seen = tokens.raw()
  let refreshing: Promise<TokenPair | null> | undefined

  /** Notices a change of the storage and tells the listeners, in a microtask: never inside the refresh lock. */
  const sync = (reason: SessionEndReason = 'ended_elsewhere') => {
    const now = tokens.raw()
    if (now === seen) return
    const ended = seen !== null && tokens.read() === null
    seen = now
    const loggedIn = !ended && now !== null
    for (const listener of listeners) queueMicrotask(() => listener(loggedIn))
    if (ended && options.onSessionEnd) queueMicrotask(() => options.onSessionEnd?.(reason))
  }

  /** Sends `outgoing`; no answer at all is a retryable TesseraError 0 (an abort by the caller stays an AbortError). */
  const request = async (outgoing: Request) => {
    try {
      return await send(outgoing)
    } catch (cause) {
      if ((cause as Error)?.name === 'AbortError') throw cause
      throw new TesseraError(0, 'The service cannot be reached', [], cause)
    }
  }

  /** A POST of `body` as JSON, with the Bearer header when an access token is given. */
  const jsonPost = (path: string, body: unknown, accessToken?: string) => {
    const headers = new Headers({ 'Content-Type': 'application/json' })
    if (accessToken !== undefined) headers.set('Authorization', `Bearer ${accessToken}`)
    return new Request(root + path, { method: 'POST', headers, body: JSON.stringify(body) })
  }

  const postJson = (path: string, body: unknown) => request(jsonPost(path, body)).then(readEnvelope)

  const notLoggedIn = () => new TesseraError(401, 'Not logged in')

  /** Names the pair `replaced`: the tab that replaces it holds this lock for a moment afterwards (markReplaced). */
  const replacedMarker = (replaced: TokenPair) => `${lockName} replaced ${replaced.accessToken.slice(-16)}`

  /** Spec 5.6: one refresh, in answer to a 401 that `refused` got. Resolves to the pair to retry with. */
  const refresh = async (refused: TokenPair) => {
    let reason: SessionEndReason | undefined
    try {
      const marker = replacedMarker(refused)
      return await withRefreshLock(locks, lockName, lockTimeoutMs, async (waited) => {
        // after another tab's refresh, its write may not have reached this tab yet: that tab made us wait for the
        // lock, or released it just before we took it and left its marker
        if (
          tokens.read()?.accessToken === refused.accessToken &&
          (waited || (lockName !== undefined && (await isMarkedReplaced(locks, marker))))
        ) {
          await otherTabWrite(key, 500)
        }
        const current = tokens.read()
        // another call or tab has refreshed (or logged out) since `refused` was read: no refresh of ours
        if (current?.accessToken !== refused.accessToken) return current
        const stored = tokens.raw()
        try {
          const data = (await postJson('/auth/refresh', { refresh_token: current.refreshToken })) as PairData
          // a login of this client stored a pair meanwhile (with no lock, nothing made it wait for this refresh): the
          // newer pair stays, and an older one never overwrites it
          if (tokens.raw() !== stored) return tokens.read()
          const pair = toPair(data)
          tokens.write(pair)
          if (lockName) await markReplaced(locks, marker, 2_000)
          return pair
        } catch (error) {
          if ((error as TesseraError).status !== 401 && (error as TesseraError).status !== 400) throw error
          // refused: the loser of a race between tabs gets this 401 too, so a pair another tab stored meanwhile
          // is kept and used (given the time to arrive, since a tab sees another's write late)
          if (lockName && tokens.read()?.refreshToken === current.refreshToken) await otherTabWrite(key, 500)
          if (tokens.read()?.refreshToken !== current.refreshToken) return tokens.read()
          tokens.clear()
          reason = 'refresh_refused'
          throw error
        }
      })
    } finally {
      sync(reason)
    }
  }

  /** One refresh at a time per client: concurrent 401s share it. */
  const refreshOnce = (refused: TokenPair) => {
    refreshing ??= refresh(refused).finally(() => {
      refreshing = undefined
    })
    return refreshing
  }

  const authorizedFetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    sync()
    const pair = tokens.read()
    if (!pair) throw notLoggedIn()
    const target = typeof input === 'string' && input.startsWith('/') ? root + input : input
    // the body is read once up front, so that a stream can be sent again after the refresh
    const original = new Request(target, { duplex: 'half', ...init } as RequestInit)
    const body = original.body && (await original.arrayBuffer())
    const attempt = (accessToken: string) => {
      const headers = new Headers(original.headers)
      headers.set('Authorization', `Bearer ${accessToken}`)
      return request(new Request(original, { headers, body }))
    }
    const response = await attempt(pair.accessToken)
    if (response.status !== 401) return response
    const fresh = await refreshOnce(pair)
    if (!fresh) throw notLoggedIn()
    return attempt(fresh.accessToken)
  }

  /** A protected call to the service: its envelope's data, or its TesseraError. */
  const protectedCall = async (path: string, init?: RequestInit) =>
    readEnvelope(await authorizedFetch(root + path, init))

  const protectedPost = (path: string, body: unknown, method = 'POST') =>
    protectedCall(path, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })

  /**
   * Stores the pair of a login answer, in place of `held` (the pair stored before the call), and answers its account;
   * called holding the refresh lock. A challenge (an account with a second factor) carries no pair: it is answered as
   * it is, and the stored pair, if any, stays.
   */
  const keep = async (data: PairData | ChallengeData, held = tokens.read()): Promise<SignIn> => {
    if ('mfa_required' in data) return camelCased(data) as unknown as MfaChallenge
    tokens.write(toPair(data))
    if (lockName && held) await markReplaced(locks, replacedMarker(held), 2_000)
    return account(data)
  }

  const me = async () => account(await protectedCall('/auth/me'))

  /**
   * A call whose answer is an account and a new pair (a login, a registration, a password set or changed), which is
   * stored as a refresh stores its pair. It is sent holding the refresh lock: no refresh of another tab is on its way
   * meanwhile, which could store the pair that this one replaces after it (the service may have ended that pair's
   * session: a login replaces the stored refresh token in single mode, R3.2; a password change or reset ends every
   * other session); and another tab that got a 401 with the replaced pair waits for this one's write, as after a
   * refresh. With `bearer`, a protected call: on a 401, it leaves the lock to the refresh (spec 5.6), which takes
   * it, and is sent once again. A first factor's challenge (docs/api.md §4.25) is answered as it is, nothing stored.
   */
  const logIn = async (path: string, body: unknown, bearer = false): Promise<SignIn> => {
    // as a protected call does: a pair discarded by another tab is noticed before its absence is reported
    if (bearer) sync()
    for (let retried = false; ; retried = true) {
      let loggedIn: SignIn | undefined
      const refused = await withRefreshLock(locks, lockName, lockTimeoutMs, async () => {
        const held = tokens.read()
        if (bearer && !held) throw notLoggedIn()
        const response = await request(jsonPost(path, body, bearer ? held?.accessToken : undefined))
        if (bearer && !retried && response.status === 401) return held
        loggedIn = await keep((await readEnvelope(response)) as PairData | ChallengeData, held)
        return null
      })
      if (loggedIn) {
        sync()
        return loggedIn
      }
      if (!refused || !(await refreshOnce(refused))) throw notLoggedIn()
    }
  }

  /** The body of a holder's proof (`deleteAccount`, `setupTotp`, `registerPasskey`): the password or the code. */
  const proofBody = (proof: HolderProof) =>
    'code' in proof ? { verification_code: proof.code } : { password: proof.password }

  /** The WebAuthn ceremonies of the `passkeys` option; a TypeError without them. */
  const ceremonies = () => {
    if (!options.passkeys) throw new TypeError('Passkeys need the passkeys option (@tessera/client/passkeys)')
    return options.passkeys
  }

  /** The recovery codes of an answer (docs/api.md §4.25). */
  const recoveryCodes = (data: unknown) => (data as { recovery_codes: string[] }).recovery_codes

  return {
    register: ({ email, password, code }) =>
      logIn('/auth/register', { email, password, verification_code: code }) as Promise<Account>,
    login: ({ email, password }) => logIn('/auth/login', { email, password }),
    async sendCode(codeRequest) {
      const { purpose } = codeRequest
      // a public purpose's request names the address; an account's never does (its address is the account's)
      if ('email' in codeRequest) {
        await postJson('/auth/email/send-code', { email: codeRequest.email, purpose })
      } else {
        const { newEmail } = codeRequest as { newEmail?: string }
        await protectedPost('/auth/me/send-code', { purpose, new_email: newEmail })
      }
    },
    loginWithCode: (email, code) => logIn('/auth/login/email-code', { email, verification_code: code }),
    resetPassword: (email, code, newPassword) =>
      logIn('/auth/password/reset', { email, verification_code: code, new_password: newPassword }),
    changePassword: (currentPassword, newPassword) =>
      logIn(
        '/auth/password/change',
        { current_password: currentPassword, new_password: newPassword },
        true,
      ) as Promise<Account>,
    changeEmail: async (newEmail, code) =>
      account(await protectedPost('/auth/email/change', { new_email: newEmail, verification_code: code })),
    verifyEmail: async (code) =>
      account(await protectedPost('/auth/email/verify', { verification_code: code })),
    async deleteAccount(proof) {
      await protectedPost('/auth/delete', proofBody(proof))
      tokens.clear()
      sync('account_deleted')
    },
    me,
    updateProfile: async (changes) => account(await protectedPost('/auth/profile', changes, 'PUT')),
    async uploadAvatar(file, filename) {
      const body = new FormData()
      // a file name of undefined would be sent as the name "undefined" (Node's FormData)
      if (filename === undefined) body.append('avatar', file)
      else body.append('avatar', file, filename)
      // no Content-Type of ours: the request sets multipart/form-data with the form's boundary
      return account(await protectedCall('/auth/avatar', { method: 'POST', body }))
    },
    removeAvatar: async () => account(await protectedCall('/auth/avatar', { method: 'DELETE' })),
    async providers() {
      const data = await readEnvelope(await request(new Request(`${root}/auth/oauth/providers`)))
      return (data as { providers: string[] }).providers
    },
    async loginWithProvider(provider, options = {}) {
      const opener = options.window ?? (globalThis as unknown as PopupOpener)
      // opened before the first await: a browser lets a page open a popup only in the click's own task
      const popup = opener.open(
        `${root}/auth/oauth/${encodeURIComponent(provider)}/start`,
        'tessera-sign-in',
        'popup',
      )
      if (!popup) throw new TesseraError(0, 'The popup was blocked')
      const origin = base ? new URL(base).origin : opener.location.origin
      const data = await providerResult(opener, popup, origin, options.timeoutMs ?? 120_000)
      // stored as a login stores its pair (logIn), holding the refresh lock; a challenge stores nothing
      const loggedIn = await withRefreshLock(locks, lockName, lockTimeoutMs, () =>
        keep(data as PairData | ChallengeData),
      )
      sync()
      return loggedIn
    },
    async providerRedirectUrl(provider, redirectTo) {
      const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)))
      const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
      verifiers().setItem(verifierKey, verifier)
      return `${root}/auth/oauth/${encodeURIComponent(provider)}/start?redirect_to=${encodeURIComponent(redirectTo)}&code_challenge=${challenge}`
    },
    async exchangeProviderCode(code) {
      // no verifier (a sign-in this tab did not start) is sent as none: the service refuses the code and uses it up
      const loggedIn = await logIn('/auth/oauth/exchange', {
        code,
        code_verifier: verifiers().getItem(verifierKey) ?? undefined,
      })
      verifiers().removeItem(verifierKey)
      return loggedIn
    },
    verifyMfa: (mfaTicket, proof) =>
      logIn(
        '/auth/mfa/verify',
        'code' in proof
          ? { mfa_ticket: mfaTicket, code: proof.code }
          : { mfa_ticket: mfaTicket, recovery_code: proof.recoveryCode },
      ) as Promise<Account>,
    setupTotp: async (proof) =>
      camelCased(
        (await protectedPost('/auth/mfa/totp/setup', proofBody(proof))) as object,
      ) as unknown as TotpSetup,
    confirmTotp: async (factorId, code) =>
      recoveryCodes(await protectedPost('/auth/mfa/totp/confirm', { factor_id: factorId, code })),
    factors: async () =>
      ((await protectedCall('/auth/mfa/factors')) as object[]).map(camelCased) as unknown as Factor[],
    async removeFactor(id) {
      await protectedCall(`/auth/mfa/factors/${encodeURIComponent(id)}`, { method: 'DELETE' })
    },
    newRecoveryCodes: async () =>
      recoveryCodes(await protectedCall('/auth/mfa/recovery-codes', { method: 'POST' })),
    async registerPasskey(proof, name) {
      const { create } = ceremonies()
      const { ticket, options: creationOptions } = (await protectedPost(
        '/auth/passkeys/register/options',
        proofBody(proof),
      )) as { ticket: string; options: PublicKeyCredentialCreationOptionsJSON }
      const credential = await create(creationOptions)
      return camelCased(
        (await protectedPost('/auth/passkeys/register/verify', { ticket, credential, name })) as object,
      ) as unknown as Factor
    },
    async loginWithPasskey(mfaTicket) {
      const { get } = ceremonies()
      const { ticket, options: requestOptions } = (await postJson('/auth/passkeys/login/options', {
        mfa_ticket: mfaTicket,
      })) as { ticket: string; options: PublicKeyCredentialRequestOptionsJSON }
      const credential = await get(requestOptions)
      return logIn('/auth/passkeys/login/verify', {
        ticket,
        credential,
        mfa_ticket: mfaTicket,
      }) as Promise<Account>
    },
    linkedProviders: async () => (await me()).providers,
    unlinkProvider: async (provider) =>
      account(await protectedCall(`/auth/oauth/${encodeURIComponent(provider)}`, { method: 'DELETE' })),
    async logout({ scope } = {}) {
      const query = scope === undefined ? '' : `?scope=${encodeURIComponent(scope)}`
      let failure: { error: unknown } | undefined
      try {
        await protectedCall(`/auth/delete-refresh-token${query}`, { method: 'POST' })
      } catch (error) {
        failure = { error }
      }
      // the tokens go in any case, a session the server still holds ending when its refresh token expires; but
      // `others` keeps this session, and a scope the service refused ended nothing
      if (scope === undefined || scope === 'all') {
        tokens.clear()
        sync('logout')
      }
      // a scoped logout is about the other devices: its caller must learn that they may still be logged in
      if (failure && scope !== undefined) throw failure.error
    },
    sessions: async () => toSessions(await protectedCall('/auth/sessions')),
    async endSession(id) {
      await protectedCall(`/auth/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' })
    },
    fetch: authorizedFetch,
    getAccessToken: () => tokens.read()?.accessToken ?? null,
    isLoggedIn: () => tokens.read() !== null,
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
