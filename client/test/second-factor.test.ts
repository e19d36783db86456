import { authenticator } from 'otplib'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  type Account,
  createTesseraClient,
  type MfaChallenge,
  type PasskeyCeremonies,
  type SignIn,
  type TesseraError,
} from '../src/index.js'
import {
  createLockManager,
  createSharedStorage,
  mailedCode,
  newCredentials,
  observedFetch,
  spoilStoredAccessToken,
  startListeningService,
  wrongCode,
} from './service.js'

// The second factor (docs/api.md §4.25) through the client: the challenge that every sign-in by a first factor may
// resolve with, verifyMfa, the authenticator app's enrolment, the factors and the recovery codes, against the real
// service; and the client's own half of each call (what it sends, what it stores) against a stand-in service, which
// is also where the passkeys' HTTP half is tested with stand-in ceremonies (the real ceremonies, with Chromium's
// virtual authenticator, are test/demo/passkeys.browser.test.ts's).

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('should have failed'),
    (error: unknown) => error as TesseraError,
  )

/** The challenge, or a failed expectation: narrows a sign-in's result as an application does. */
function challengeOf(signIn: SignIn): MfaChallenge {
  if (!('mfaRequired' in signIn)) return expect.unreachable('expected the second step, got an account')
  return signIn
}

/** The account, or a failed expectation. */
function accountOf(signIn: SignIn): Account {
  if ('mfaRequired' in signIn) return expect.unreachable('expected an account, got the second step')
  return signIn
}

/**
 * The authenticator app's code for `secret` at `offsetSteps` time steps from now, computed by otplib: another
 * implementation of RFC 6238 than the service's (otpauth).
 */
const appCode = (secret: string, offsetSteps = 0) =>
  authenticator.clone({ epoch: Date.now() + offsetSteps * 30_000 }).generate(secret)

const SECOND_FACTOR_INVALID = 'Second factor invalid or expired'

describe('against the service', () => {
  let service: Awaited<ReturnType<typeof startListeningService>>
  beforeAll(async () => {
    // development without SMTP_URL: the service writes each message to its outbox folder
    service = await startListeningService({ NODE_ENV: 'development' })
  })
  afterAll(() => service?.close())

  /** Whether the service still takes the refresh token stored in `storage` (a raw call, which uses it up if so). */
  async function refreshTokenWorks(storage: ReturnType<typeof createSharedStorage>) {
    const { refreshToken } = JSON.parse(storage.getItem('tessera.tokens') ?? '{}') as {
      refreshToken?: string
    }
    const answer = await fetch(`${service.baseUrl}/auth/refresh`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken }),
    })
    return answer.status === 200
  }

  /** A client whose every request is observed, with its own storage (a device). */
  function newDevice() {
    const storage = createSharedStorage()
    const observed = observedFetch()
    const onSessionEnd = vi.fn()
    const client = createTesseraClient({
      baseUrl: service.baseUrl,
      storage,
      fetch: observed.send,
      onSessionEnd,
    })
    /** What it has sent since the last call, as `METHOD /path status?`; forgotten once read. */
    const sent = () => observed.requests.splice(0).map((r) => `${r.method} ${r.path}`)
    return { client, storage, onSessionEnd, sent }
  }

  /** A new account, registered and verified by `device`, which stays logged in. */
  async function verifiedAccount(device = newDevice()) {
    const credentials = newCredentials()
    await device.client.register(credentials)
    await device.client.sendCode({ purpose: 'verify_email' })
    await device.client.verifyEmail(await mailedCode(service.mailbox, credentials.email))
    device.sent()
    return { ...device, credentials }
  }

  /** An account with an authenticator app, turned on by `device`: its secret and recovery codes. */
  async function accountWithApp() {
    const device = await verifiedAccount()
    const setup = await device.client.setupTotp({ password: device.credentials.password })
    const recoveryCodes = await device.client.confirmTotp(setup.factorId, appCode(setup.secret))
    device.sent()
    return { ...device, setup, recoveryCodes }
  }

  it('adds an authenticator app: the QR code, its URI and secret; its first code turns it on with ten recovery codes', async () => {
    const { client, credentials, sent } = await verifiedAccount()
    const setup = await client.setupTotp({ password: credentials.password })
    expect(setup).toEqual({
      factorId: expect.stringMatching(/^[0-9a-f]{32}$/),
      secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
      uri: expect.stringMatching(/^otpauth:\/\/totp\//),
      qrCode: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
    })
    expect(new URL(setup.uri).searchParams.get('secret')).toBe(setup.secret)
    expect(await client.factors()).toEqual([])

    // a code that is not the app's: refused, and the factor stays pending
    expect(await failure(client.confirmTotp(setup.factorId, wrongCode(appCode(setup.secret))))).toMatchObject(
      {
        status: 400,
      },
    )
    const recoveryCodes = await client.confirmTotp(setup.factorId, appCode(setup.secret))
    expect(recoveryCodes).toHaveLength(10)
    expect(new Set(recoveryCodes).size).toBe(10)
    expect(await client.factors()).toEqual([
      {
        id: setup.factorId,
        type: 'totp',
        name: expect.any(String),
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        lastUsedAt: expect.toSatisfy((value) => value === null || typeof value === 'string'),
      },
    ])
    expect(sent()).toEqual([
      'POST /auth/mfa/totp/setup',
      'GET /auth/mfa/factors',
      'POST /auth/mfa/totp/confirm',
      'POST /auth/mfa/totp/confirm',
      'GET /auth/mfa/factors',
    ])
    // the session that turned it on goes on
    expect((await client.me()).email).toBe(credentials.email)
  })

  it('then login resolves with the challenge and stores nothing; verifyMfa with the app’s code logs in', async () => {
    const { credentials, setup } = await accountWithApp()
    const device = newDevice()
    const challenge = challengeOf(await device.client.login(credentials))
    expect(challenge).toEqual({
      mfaRequired: true,
      mfaTicket: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      factors: expect.arrayContaining(['totp', 'recovery_code']),
    })
    expect(device.client.isLoggedIn()).toBe(false)
    expect(device.storage.items.size).toBe(0)

    // a wrong code: one 401 for every refusal, which never causes a refresh
    const wrong = await failure(
      device.client.verifyMfa(challenge.mfaTicket, { code: wrongCode(appCode(setup.secret, 1)) }),
    )
    expect(wrong).toMatchObject({ status: 401, message: SECOND_FACTOR_INVALID, retryable: false })
    // the code of the current step turned the app on: the next step's, within the drift allowed, signs in
    const account = await device.client.verifyMfa(challenge.mfaTicket, { code: appCode(setup.secret, 1) })
    expect(account.email).toBe(credentials.email)
    expect(account).not.toHaveProperty('accessToken')
    expect(device.client.isLoggedIn()).toBe(true)
    expect(await device.client.me()).toEqual(account)
    expect(device.sent()).toEqual([
      'POST /auth/login',
      'POST /auth/mfa/verify',
      'POST /auth/mfa/verify',
      'GET /auth/me',
    ])
    expect(device.onSessionEnd).not.toHaveBeenCalled()
    // the ticket is used up
    expect(
      await failure(device.client.verifyMfa(challenge.mfaTicket, { code: appCode(setup.secret, 1) })),
    ).toMatchObject({ status: 401, message: SECOND_FACTOR_INVALID })
  })

  it('a login of a logged-in client answered by the challenge keeps the pair it held', async () => {
    const { credentials } = await accountWithApp()
    const device = newDevice()
    const other = await verifiedAccount(device)
    const held = device.storage.getItem('tessera.tokens')
    challengeOf(await device.client.login(credentials))
    expect(device.storage.getItem('tessera.tokens')).toBe(held)
    expect((await device.client.me()).email).toBe(other.credentials.email)
  })

  it('loginWithCode and resetPassword resolve with the challenge too; each recovery code completes one, once', async () => {
    const { credentials, recoveryCodes } = await accountWithApp()
    const device = newDevice()
    await device.client.sendCode({ email: credentials.email, purpose: 'login' })
    const byCode = challengeOf(
      await device.client.loginWithCode(
        credentials.email,
        await mailedCode(service.mailbox, credentials.email),
      ),
    )
    const [first, second] = recoveryCodes
    if (first === undefined || second === undefined) return expect.unreachable('ten codes')
    // hyphens and case do not matter (docs/api.md §4.25)
    accountOf(await device.client.verifyMfa(byCode.mfaTicket, { recoveryCode: first.toLowerCase() }))
    expect(device.client.isLoggedIn()).toBe(true)

    // a reset sets the password and ends the sessions, but logs in only with the second step
    const newPassword = 'a brand new passphrase'
    await device.client.sendCode({ email: credentials.email, purpose: 'reset_password' })
    const code = await mailedCode(service.mailbox, credentials.email)
    const byReset = challengeOf(await device.client.resetPassword(credentials.email, code, newPassword))
    // the session of the first recovery code ended with the reset: its refresh token is refused
    expect(await refreshTokenWorks(device.storage)).toBe(false)
    // a used recovery code is refused, as any wrong one
    expect(await failure(device.client.verifyMfa(byReset.mfaTicket, { recoveryCode: first }))).toMatchObject({
      status: 401,
      message: SECOND_FACTOR_INVALID,
    })
    const account = await device.client.verifyMfa(byReset.mfaTicket, { recoveryCode: second })
    expect(account.email).toBe(credentials.email)
    // the new password is the one: it asks for the second step again
    challengeOf(await newDevice().client.login({ email: credentials.email, password: newPassword }))
  })

  it('newRecoveryCodes gives ten others and voids the old; removeFactor turns the second step off', async () => {
    const { client, storage, credentials, recoveryCodes, setup } = await accountWithApp()
    const renewed = await client.newRecoveryCodes()
    expect(renewed).toHaveLength(10)
    expect(renewed.filter((code) => recoveryCodes.includes(code))).toEqual([])
    const device = newDevice()
    const challenge = challengeOf(await device.client.login(credentials))
    expect(
      await failure(device.client.verifyMfa(challenge.mfaTicket, { recoveryCode: recoveryCodes[0] ?? '' })),
    ).toMatchObject({ status: 401 })
    accountOf(await device.client.verifyMfa(challenge.mfaTicket, { recoveryCode: renewed[0] ?? '' }))

    // the session established with the second factor removes it; the other sessions end
    await device.client.removeFactor(setup.factorId)
    expect(await device.client.factors()).toEqual([])
    expect(await refreshTokenWorks(storage)).toBe(false)
    expect(await failure(device.client.removeFactor(setup.factorId))).toMatchObject({ status: 404 })
    // no factor left: a password logs in by itself again
    accountOf(await newDevice().client.login(credentials))
  })

  it('adding a factor needs the password (or a code of manage_factors) and a verified address', async () => {
    const device = newDevice()
    const credentials = newCredentials()
    await device.client.register(credentials)
    expect(await failure(device.client.setupTotp({ password: credentials.password }))).toMatchObject({
      status: 403,
    })
    await device.client.sendCode({ purpose: 'verify_email' })
    await device.client.verifyEmail(await mailedCode(service.mailbox, credentials.email))
    expect(await failure(device.client.setupTotp({ password: 'not the password' }))).toMatchObject({
      status: 400,
    })
    // a code mailed for the purpose manage_factors is the other proof
    await device.client.sendCode({ purpose: 'manage_factors' })
    const code = await mailedCode(service.mailbox, credentials.email)
    expect(await failure(device.client.setupTotp({ code: wrongCode(code) }))).toMatchObject({ status: 400 })
    const setup = await device.client.setupTotp({ code })
    expect(setup.factorId).toMatch(/^[0-9a-f]{32}$/)
    device.sent()

    // a protected call as any other: an access token refused is refreshed once, and the call repeated
    spoilStoredAccessToken(device.storage)
    expect(await device.client.confirmTotp(setup.factorId, appCode(setup.secret))).toHaveLength(10)
    expect(device.sent()).toEqual([
      'POST /auth/mfa/totp/confirm',
      'POST /auth/refresh',
      'POST /auth/mfa/totp/confirm',
    ])
  })
})

describe("the client's half, against a stand-in service", () => {
  /** An account of the API, with a pair when `pair` names it (a login answer). */
  const accountData = (pair?: number) => ({
    id: '1000000001',
    email: 'ada@example.com',
    email_verified: true,
    username: null,
    nickname: null,
    avatar_url: null,
    bio: null,
    role: 'user',
    status: 'active',
    password_set: true,
    providers: [],
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...(pair === undefined ? {} : { access_token: `access-${pair}`, refresh_token: `refresh-${pair}` }),
  })
  const TICKET = 'T'.repeat(43)
  const CHALLENGE = { mfa_required: true, mfa_ticket: TICKET, factors: ['totp', 'passkey', 'recovery_code'] }
  const FACTOR = {
    id: 'f'.repeat(32),
    type: 'passkey',
    name: 'Laptop',
    created_at: '2026-01-02T00:00:00.000Z',
    last_used_at: null,
  }

  /**
   * A stand-in service: `answer` gives each request's status and data (`METHOD /path` and its JSON body), and every
   * request is recorded as it was sent.
   */
  function standIn(answer: (route: string, body: Record<string, unknown> | null) => [number, unknown]) {
    const sent: Array<{ route: string; body: Record<string, unknown> | null; bearer: string | null }> = []
    const fetch = async (request: Request) => {
      const text = await request.text()
      const route = `${request.method} ${new URL(request.url).pathname}`
      const body = text === '' ? null : (JSON.parse(text) as Record<string, unknown>)
      sent.push({ route, body, bearer: request.headers.get('authorization') })
      const [status, data] = answer(route, body)
      return Response.json(
        { code: status, message: status === 200 ? 'Success' : SECOND_FACTOR_INVALID, data },
        { status },
      )
    }
    return { fetch, sent }
  }

  /** A client of `service`, logged in with the pair `access-0`/`refresh-0` (when `loggedIn`). */
  function clientOf(
    service: ReturnType<typeof standIn>,
    options: { loggedIn?: boolean; passkeys?: PasskeyCeremonies } = {},
  ) {
    const storage = createSharedStorage()
    if (options.loggedIn)
      storage.setItem(
        'tessera.tokens',
        JSON.stringify({ accessToken: 'access-0', refreshToken: 'refresh-0' }),
      )
    const onChange = vi.fn()
    const client = createTesseraClient({
      baseUrl: 'http://auth.example',
      storage,
      fetch: service.fetch,
      locks: createLockManager(),
      passkeys: options.passkeys,
    })
    client.onChange(onChange)
    return { client, storage, onChange }
  }

  it('every sign-in by a first factor resolves with the challenge in camelCase, and leaves the stored pair as it was', async () => {
    const service = standIn(() => [200, CHALLENGE])
    const { client, storage, onChange } = clientOf(service, { loggedIn: true })
    const held = storage.getItem('tessera.tokens')
    const expected = { mfaRequired: true, mfaTicket: TICKET, factors: ['totp', 'passkey', 'recovery_code'] }
    expect(await client.login({ email: 'ada@example.com', password: 'correct horse battery' })).toEqual(
      expected,
    )
    expect(await client.loginWithCode('ada@example.com', '123456')).toEqual(expected)
    expect(await client.resetPassword('ada@example.com', '123456', 'a brand new passphrase')).toEqual(
      expected,
    )
    // the verifier of a redirect sign-in is kept in this client's memory (Node has no sessionStorage)
    await client.providerRedirectUrl('google', 'http://app.example/back')
    expect(await client.exchangeProviderCode('one-time-code')).toEqual(expected)
    expect(service.sent.map(({ route }) => route)).toEqual([
      'POST /auth/login',
      'POST /auth/login/email-code',
      'POST /auth/password/reset',
      'POST /auth/oauth/exchange',
    ])
    expect(storage.getItem('tessera.tokens')).toBe(held)
    await Promise.resolve()
    expect(onChange).not.toHaveBeenCalled()
  })

  it('verifyMfa sends the ticket with the code or the recovery code and keeps the pair; a refusal causes no refresh', async () => {
    let answers = 0
    const service = standIn((route) =>
      route === 'POST /auth/mfa/verify' && ++answers === 1 ? [401, null] : [200, accountData(answers)],
    )
    const { client, storage, onChange } = clientOf(service)
    expect(await failure(client.verifyMfa(TICKET, { code: '123456' }))).toMatchObject({
      status: 401,
      message: SECOND_FACTOR_INVALID,
    })
    expect(client.isLoggedIn()).toBe(false)
    const account = await client.verifyMfa(TICKET, { recoveryCode: 'ABCD-EFGH-JKMN' })
    expect(account).toMatchObject({ id: '1000000001', email: 'ada@example.com', emailVerified: true })
    expect(account).not.toHaveProperty('accessToken')
    expect(JSON.parse(storage.getItem('tessera.tokens') ?? '')).toEqual({
      accessToken: 'access-2',
      refreshToken: 'refresh-2',
    })
    expect(service.sent).toEqual([
      { route: 'POST /auth/mfa/verify', body: { mfa_ticket: TICKET, code: '123456' }, bearer: null },
      {
        route: 'POST /auth/mfa/verify',
        body: { mfa_ticket: TICKET, recovery_code: 'ABCD-EFGH-JKMN' },
        bearer: null,
      },
    ])
    await Promise.resolve()
    expect(onChange).toHaveBeenCalledWith(true)
  })

  it('the factors: what each call sends, with the Bearer header, and what it resolves with', async () => {
    const service = standIn((route) => {
      switch (route) {
        case 'POST /auth/mfa/totp/setup':
          return [
            200,
            {
              factor_id: 'a'.repeat(32),
              secret: 'S'.repeat(32),
              uri: 'otpauth://totp/x',
              qr_code: 'data:image/svg+xml;base64,AA',
            },
          ]
        case 'POST /auth/mfa/totp/confirm':
        case 'POST /auth/mfa/recovery-codes':
          return [200, { recovery_codes: ['AAAA-BBBB-CCCC'] }]
        case 'GET /auth/mfa/factors':
          return [200, [FACTOR]]
        default:
          return [200, null]
      }
    })
    const { client } = clientOf(service, { loggedIn: true })
    expect(await client.setupTotp({ password: 'correct horse battery' })).toEqual({
      factorId: 'a'.repeat(32),
      secret: 'S'.repeat(32),
      uri: 'otpauth://totp/x',
      qrCode: 'data:image/svg+xml;base64,AA',
    })
    await client.setupTotp({ code: '123456' })
    expect(await client.confirmTotp('a'.repeat(32), '654321')).toEqual(['AAAA-BBBB-CCCC'])
    expect(await client.factors()).toEqual([
      {
        id: 'f'.repeat(32),
        type: 'passkey',
        name: 'Laptop',
        createdAt: '2026-01-02T00:00:00.000Z',
        lastUsedAt: null,
      },
    ])
    expect(await client.removeFactor('f'.repeat(32))).toBeUndefined()
    expect(await client.newRecoveryCodes()).toEqual(['AAAA-BBBB-CCCC'])
    expect(service.sent).toEqual([
      {
        route: 'POST /auth/mfa/totp/setup',
        body: { password: 'correct horse battery' },
        bearer: 'Bearer access-0',
      },
      {
        route: 'POST /auth/mfa/totp/setup',
        body: { verification_code: '123456' },
        bearer: 'Bearer access-0',
      },
      {
        route: 'POST /auth/mfa/totp/confirm',
        body: { factor_id: 'a'.repeat(32), code: '654321' },
        bearer: 'Bearer access-0',
      },
      { route: 'GET /auth/mfa/factors', body: null, bearer: 'Bearer access-0' },
      { route: `DELETE /auth/mfa/factors/${'f'.repeat(32)}`, body: null, bearer: 'Bearer access-0' },
      { route: 'POST /auth/mfa/recovery-codes', body: null, bearer: 'Bearer access-0' },
    ])
  })

  /** Stand-in ceremonies: record the options they were given, answer a credential of their own. */
  function ceremonies() {
    const created = { id: 'new', response: { attestationObject: 'AA' } }
    const asserted = { id: 'old', response: { signature: 'BB' } }
    const passkeys = {
      create: vi.fn(async (_options: PublicKeyCredentialCreationOptionsJSON) => created),
      get: vi.fn(async (_options: PublicKeyCredentialRequestOptionsJSON) => asserted),
    }
    return { passkeys, created, asserted }
  }
  const CREATION = {
    challenge: 'Y2hhbGxlbmdl',
    rp: { name: 'Tessera' },
    user: { id: 'dQ', name: 'ada', displayName: 'ada' },
    pubKeyCredParams: [],
  }
  const REQUEST = { challenge: 'cmVxdWVzdA', userVerification: 'required' }

  it('registerPasskey: the options for the proof, the ceremony with them, and its credential with the name', async () => {
    const service = standIn((route) =>
      route === 'POST /auth/passkeys/register/options'
        ? [200, { ticket: 'registration-ticket', options: CREATION }]
        : [200, FACTOR],
    )
    const { passkeys, created } = ceremonies()
    const { client } = clientOf(service, { loggedIn: true, passkeys })
    expect(await client.registerPasskey({ password: 'correct horse battery' }, 'Laptop')).toEqual({
      id: 'f'.repeat(32),
      type: 'passkey',
      name: 'Laptop',
      createdAt: '2026-01-02T00:00:00.000Z',
      lastUsedAt: null,
    })
    expect(passkeys.create).toHaveBeenCalledWith(CREATION)
    await client.registerPasskey({ code: '123456' })
    expect(service.sent).toEqual([
      {
        route: 'POST /auth/passkeys/register/options',
        body: { password: 'correct horse battery' },
        bearer: 'Bearer access-0',
      },
      {
        route: 'POST /auth/passkeys/register/verify',
        body: { ticket: 'registration-ticket', credential: created, name: 'Laptop' },
        bearer: 'Bearer access-0',
      },
      {
        route: 'POST /auth/passkeys/register/options',
        body: { verification_code: '123456' },
        bearer: 'Bearer access-0',
      },
      {
        route: 'POST /auth/passkeys/register/verify',
        body: { ticket: 'registration-ticket', credential: created },
        bearer: 'Bearer access-0',
      },
    ])
  })

  it('loginWithPasskey: without a ticket, a sign-in by itself; with one, it completes that challenge', async () => {
    let logins = 0
    const service = standIn((route) =>
      route === 'POST /auth/passkeys/login/options'
        ? [200, { ticket: 'passkey-ticket', options: REQUEST }]
        : [200, accountData(++logins)],
    )
    const { passkeys, asserted } = ceremonies()
    const { client, storage } = clientOf(service, { passkeys })
    expect((await client.loginWithPasskey()).email).toBe('ada@example.com')
    expect(passkeys.get).toHaveBeenCalledWith(REQUEST)
    expect(JSON.parse(storage.getItem('tessera.tokens') ?? '')).toEqual({
      accessToken: 'access-1',
      refreshToken: 'refresh-1',
    })
    await client.loginWithPasskey(TICKET)
    expect(JSON.parse(storage.getItem('tessera.tokens') ?? '')).toEqual({
      accessToken: 'access-2',
      refreshToken: 'refresh-2',
    })
    expect(service.sent).toEqual([
      { route: 'POST /auth/passkeys/login/options', body: {}, bearer: null },
      {
        route: 'POST /auth/passkeys/login/verify',
        body: { ticket: 'passkey-ticket', credential: asserted },
        bearer: null,
      },
      { route: 'POST /auth/passkeys/login/options', body: { mfa_ticket: TICKET }, bearer: null },
      {
        route: 'POST /auth/passkeys/login/verify',
        body: { ticket: 'passkey-ticket', credential: asserted, mfa_ticket: TICKET },
        bearer: null,
      },
    ])
  })

  it("the ceremony's refusal rejects as it is, before the credential is sent; without the passkeys option, nothing is sent", async () => {
    const service = standIn(() => [200, { ticket: 'passkey-ticket', options: REQUEST }])
    const cancelled = new DOMException(
      'The operation either timed out or was not allowed.',
      'NotAllowedError',
    )
    const passkeys = { create: vi.fn(), get: vi.fn(async () => Promise.reject(cancelled)) }
    await expect(clientOf(service, { passkeys }).client.loginWithPasskey()).rejects.toBe(cancelled)
    expect(service.sent.map(({ route }) => route)).toEqual(['POST /auth/passkeys/login/options'])

    service.sent.length = 0
    const { client } = clientOf(service, { loggedIn: true })
    await expect(client.loginWithPasskey()).rejects.toThrow(TypeError)
    await expect(client.registerPasskey({ password: 'correct horse battery' })).rejects.toThrow(
      'Passkeys need the passkeys option (@tessera/client/passkeys)',
    )
    expect(service.sent).toEqual([])
  })
})
