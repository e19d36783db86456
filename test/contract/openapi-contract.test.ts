import { randomUUID } from 'node:crypto'
import { authenticator } from 'otplib'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Clock } from '../../src/clock.js'
import type { Stores } from '../../src/storage/stores.js'
import { pageResult, pkcePair } from '../providers/provider-harness.js'
import { backends } from '../support/backends.js'
import { makeCertificate } from '../support/certificates.js'
import { withInjectedFailures } from '../support/failing-stores.js'
import { PASSWORD } from '../support/http.js'
import { codeIn, emlMailbox, type Mailbox } from '../support/mailbox.js'
import { startOidcProvider } from '../support/oidc-provider.js'
import { type RunningService, startProcess } from '../support/process.js'
import { freePort } from '../support/redis-server.js'
import { SoftwareAuthenticator } from '../support/software-authenticator.js'
import { useTempDir } from '../support/temp-dir.js'
import { TestBrowser } from '../support/test-browser.js'
import { startTestService, type TestService, type TestServiceOptions } from '../support/test-service.js'
import { ApiDocument } from './api-document.js'

// The served API document as a contract (issue 13): a realistic sequence against listening services, each
// endpoint's successes and every documented failure, each answer checked against GET /openapi.json with Ajv; then
// the reverse, every documented answer seen, but for those listed with the reason none can be made to happen.

/** Documented answers no request can produce without a bug in the service, and why. */
const NOT_EXERCISED: Readonly<Record<string, string>> = {
  'getHealth 500':
    "R7.1's unforeseen failure: every probe's failure and timeout is caught and answered 503, nothing else can fail",
  'getSiteConfig 500': 'R7.1: the handler answers an object loaded at start, and nothing in it can fail',
  'getSiteConfigSchema 500':
    'R7.1: the handler answers a document built at start, and nothing in it can fail',
  'getJwks 500': 'R7.1: the handler answers the key set built at start, and nothing in it can fail',
  'getOpenIdConfiguration 500':
    'R7.1: the handler answers the document built at start, and nothing in it can fail',
  'listProviders 500':
    'R7.1: the handler answers the names of OAUTH_PROVIDERS read at start, and nothing in it can fail',
}

const backend = backends[0]!
/** Register and refresh allow this many requests a minute: rate limiting on, so its headers are sent. */
const RATE_LIMIT = { RATE_LIMIT_PER_MINUTE: '100' }
const NEW_PASSWORD = 'staple battery horse'
/** The paths of docs/api.md §4.14 to §4.21 that take an access token. */
const PROTECTED_EMAIL_PATHS = [
  '/auth/me/send-code',
  '/auth/password/change',
  '/auth/email/change',
  '/auth/email/verify',
  '/auth/delete',
] as const

/** The code of the next mail to `to` that carries one; the notices taken on the way carry none. */
async function mailedCode(mailbox: Mailbox, to: string): Promise<string> {
  for (;;) {
    const code = codeIn(await mailbox.next(to))
    if (code !== null) return code
  }
}

/** The stores a failure is injected into, each call (R7.1) or each write (R7.3). */
const FAILING_STORES = [
  'users',
  'sessions',
  'codes',
  'outbox',
  'avatars',
  'providerLinks',
  'tickets',
  'factors',
] as const

/**
 * The writes of the factor store, failing with their outcome unknown (R7.3) in that store alone: the outbox has a
 * `remove` of its own, which its sender calls.
 */
const FACTOR_WRITES = [
  'add',
  'confirm',
  'useStep',
  'usePasskey',
  'remove',
  'removeAll',
  'replaceRecoveryCodes',
  'useRecoveryCode',
] as const

/**
 * One OpenID provider, `unreachable`, whose issuer nothing answers (port 1 of the loopback address): its sign-ins get
 * as far as the start's failure page. A reachable one needs a service that trusts its certificate: see the test of a
 * real provider below.
 */
const UNREACHABLE_PROVIDER = {
  OAUTH_PROVIDERS: 'unreachable',
  OAUTH_UNREACHABLE_ISSUER: 'https://127.0.0.1:1',
  OAUTH_UNREACHABLE_CLIENT_ID: 'tessera',
  OAUTH_UNREACHABLE_CLIENT_SECRET: 'not-a-secret',
}

/** A small image of `format`, made with sharp: what an avatar upload takes. */
const image = (format: 'png' | 'jpeg') =>
  sharp({ create: { width: 16, height: 16, channels: 3, background: '#336699' } })
    .toFormat(format)
    .toBuffer()

/** A form with a file `bytes` of `type` under `field`, as a browser's upload sends it. */
function fileForm(bytes: Buffer | string, type = 'image/png', field = 'avatar'): FormData {
  const form = new FormData()
  form.append(field, new Blob([bytes], { type }), 'picture')
  return form
}

/** A form without a file. */
function formWithout(): FormData {
  const form = new FormData()
  form.append('caption', 'no file here')
  return form
}

/** The path of GET /avatars/{id} for an `avatar_url` (which carries BASE_PATH). */
const avatarPath = (avatarUrl: string) => `/avatars/${avatarUrl.split('/').pop()}`

/** A code that is not `code`. */
const otherThan = (code: string) => (code === '000000' ? '000001' : '000000')

/** RFC 6238's time step, the authenticator apps' and the service's (docs/api.md R4.25.2). */
const TOTP_STEP_MS = 30_000

/**
 * The authenticator app's code for `secret`, `steps` time steps from now, computed by otplib, not by the service's
 * own implementation. The service of these tests runs on the system clock, so "now" is the service's time too.
 */
const appCode = (secret: string, steps = 0) =>
  authenticator.clone({ epoch: Date.now() + steps * TOTP_STEP_MS }).generate(secret)

/**
 * A code the app does not show for `secret` at any step within two of now: refused as a wrong code, whatever step
 * boundary the request crosses on its way (the service accepts one step of drift either way, R4.25.3).
 */
function notTheAppCode(secret: string): string {
  const near = [-2, -1, 0, 1, 2].map((steps) => appCode(secret, steps))
  const code = ['000000', '000001', '000002', '000003', '000004', '000005'].find(
    (each) => !near.includes(each),
  )
  if (code === undefined) throw new Error('five codes cannot cover six')
  return code
}

interface Listening {
  service: TestService
  /**
   * Sends a request to a path of the document, checks the answer against it, and returns the answer: `body` parsed
   * when it is JSON, `text` when it is text. Redirects are answers, not followed.
   */
  send(method: string, path: string, init?: Send): Promise<Received>
}

interface Received {
  status: number
  headers: Headers
  body: any
  text: string
}

interface Send {
  json?: unknown
  body?: string | Buffer
  /** A form (multipart/form-data), sent with the content type and boundary fetch gives it. */
  form?: FormData
  contentType?: string
  token?: string
  authorization?: string
  /** A Cookie header, as the browser that started a sign-in would send it. */
  cookie?: string
}

describe('R4.9.7 the API document is the contract: every answer of a realistic sequence is valid against it', () => {
  let api: ApiDocument
  const temp = useTempDir('contract')
  const services: TestService[] = []
  const mailboxes: Mailbox[] = []

  /**
   * The development outbox of a service without SMTP_URL, where its codes arrive as `.eml` files (closed after the
   * tests).
   */
  function mailboxOf(service: TestService): Mailbox {
    const mailbox = emlMailbox(service.config.storage.dataDir)
    mailboxes.push(mailbox)
    return mailbox
  }

  /** Sends a request to `base` + `path`, checks the answer against the document, and returns it. */
  async function sendTo(base: string, method: string, path: string, init: Send = {}): Promise<Received> {
    const headers: Record<string, string> = {}
    let body: string | Buffer | FormData | undefined = init.form ?? init.body
    if (init.json !== undefined) body = JSON.stringify(init.json)
    if (body !== undefined && init.form === undefined)
      headers['content-type'] = init.contentType ?? 'application/json'
    if (init.token) headers.authorization = `Bearer ${init.token}`
    if (init.authorization) headers.authorization = init.authorization
    if (init.cookie) headers.cookie = init.cookie
    const response = await fetch(`${base}${path}`, { method, headers, body, redirect: 'manual' })
    const bytes = Buffer.from(await response.arrayBuffer())
    api.check({ method, path, status: response.status, headers: response.headers, body: bytes })
    const text = bytes.toString('utf8')
    const json = /^application\/json\b/.test(response.headers.get('content-type') ?? '') && text !== ''
    return {
      status: response.status,
      headers: response.headers,
      body: json ? JSON.parse(text) : undefined,
      text,
    }
  }

  /** A service on a free port of 127.0.0.1, whose answers are checked against the document. */
  async function listen(options: TestServiceOptions): Promise<Listening> {
    const service = await startTestService(backend, options)
    services.push(service)
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    const address = service.app.server.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    // the paths of the document are under the URL of its server (BASE_PATH)
    const server = api.document.servers[0].url.replace(/\/$/, '')
    const base = `http://127.0.0.1:${address.port}${server}`
    return {
      service,
      send: (method, path, init) => sendTo(base, method, path, init),
    }
  }

  beforeAll(async () => {
    const source = await startTestService(backend)
    try {
      const answer = await source.app.inject({ method: 'GET', url: '/openapi.json' })
      api = new ApiDocument(answer.json())
    } finally {
      await source.close()
    }
  })
  afterAll(async () => {
    for (const mailbox of mailboxes) await mailbox.close()
    for (const service of services) await service.close()
  })

  it('every endpoint: its successes, 400, 401 of each kind, 404, 405, 409, 413, 415, and 500/503 of a failing store', async () => {
    let failure: 'none' | 'lost' | 'outcome unknown' | 'probe' = 'none'
    let clockFails = false
    const clock: Clock = {
      now() {
        if (clockFails) throw new Error('injected: the clock fails')
        return Date.now()
      },
    }
    const { service, send } = await listen({
      env: { ...RATE_LIMIT, ...UNREACHABLE_PROVIDER },
      clock,
      wrapStores: (stores: Stores) => {
        const failing = withInjectedFailures(
          withInjectedFailures(stores, () => failure === 'lost', {
            stores: [...FAILING_STORES, 'sharedCounters'],
          }),
          () => failure === 'outcome unknown',
          {
            writes: [
              'create',
              'start',
              'rotate',
              'end',
              'endAll',
              'put',
              'take',
              'enqueue',
              'updateProfile',
              'delete',
              'unlink',
            ],
            outcomeUnknown: true,
            stores: FAILING_STORES,
          },
        )
        const failingFactors = withInjectedFailures(failing, () => failure === 'outcome unknown', {
          writes: FACTOR_WRITES,
          outcomeUnknown: true,
          stores: ['factors'],
        })
        const database = stores.probes.database!
        const probes = {
          ...stores.probes,
          database: () => (failure === 'probe' ? Promise.reject(new Error('injected')) : database()),
        }
        return { ...failingFactors, probes }
      },
    })

    // status and documents
    expect((await send('GET', '/health')).status).toBe(200)
    expect((await send('GET', '/info')).status).toBe(200)
    expect((await send('GET', '/site-config')).status).toBe(200)
    expect((await send('GET', '/site-config/schema')).status).toBe(200)
    expect((await send('GET', '/.well-known/jwks.json')).body).toEqual({ keys: [] })
    expect((await send('GET', '/.well-known/openid-configuration')).status).toBe(200)

    // register: an address RFC 5321 refuses and the WHATWG rule accepts, answered and validated by the pattern
    const email = `contract.${randomUUID()}.@example.com`
    const registered = await send('POST', '/auth/register', {
      json: { email: ` ${email.toUpperCase()}`, password: PASSWORD },
    })
    expect(registered.status).toBe(200)
    expect(registered.body.data.email).toBe(email)
    expect((await send('POST', '/auth/register', { json: { email, password: PASSWORD } })).status).toBe(409)
    for (const json of [{ email: 'a@b@c', password: PASSWORD }, { email, password: 'short' }, {}, []]) {
      expect((await send('POST', '/auth/register', { json })).status).toBe(400)
    }
    expect((await send('POST', '/auth/register', { body: '{"email":' })).status).toBe(400)
    expect((await send('POST', '/auth/register', { body: Buffer.from([0x7b, 0xff, 0x7d]) })).status).toBe(400)
    expect(
      (await send('POST', '/auth/register', { body: 'email=a', contentType: 'text/plain' })).status,
    ).toBe(415)
    expect(
      (await send('POST', '/auth/register', { json: { email, password: 'x'.repeat(17_000) } })).status,
    ).toBe(413)

    // login
    const loggedIn = await send('POST', '/auth/login', { json: { email, password: PASSWORD } })
    expect(loggedIn.status).toBe(200)
    const { access_token: access, refresh_token: refresh } = loggedIn.body.data
    expect((await send('POST', '/auth/login', { json: { email, password: 'wrong password' } })).status).toBe(
      401,
    )
    expect((await send('POST', '/auth/login', { json: { email, password: '' } })).status).toBe(400)
    expect((await send('POST', '/auth/login', { body: 'x', contentType: 'text/plain' })).status).toBe(415)
    expect(
      (await send('POST', '/auth/login', { json: { email, password: 'x'.repeat(17_000) } })).status,
    ).toBe(413)

    // who am I, and the four 401s of R5.2 on every protected endpoint
    expect((await send('GET', '/auth/me', { token: access })).body.data.email).toBe(email)
    for (const [method, path] of [
      ['GET', '/auth/me'],
      ['POST', '/auth/delete-refresh-token'],
      ['GET', '/auth/sessions'],
      ['DELETE', `/auth/sessions/${'0'.repeat(32)}`],
      ['PUT', '/auth/profile'],
      ['POST', '/auth/avatar'],
      ['DELETE', '/auth/avatar'],
      ['DELETE', '/auth/oauth/unreachable'],
      ['POST', '/auth/passkeys/register/options'],
      ['POST', '/auth/passkeys/register/verify'],
      ['POST', '/auth/mfa/totp/setup'],
      ['POST', '/auth/mfa/totp/confirm'],
      ['GET', '/auth/mfa/factors'],
      ['DELETE', `/auth/mfa/factors/${'0'.repeat(32)}`],
      ['POST', '/auth/mfa/recovery-codes'],
      ...PROTECTED_EMAIL_PATHS.map((protectedPath) => ['POST', protectedPath] as const),
    ] as const) {
      for (const authorization of [
        undefined,
        `bearer ${access}`,
        'Bearer not.a.token',
        `Bearer ${refresh}`,
      ]) {
        expect((await send(method, path, authorization ? { authorization } : {})).status).toBe(401)
      }
    }

    // refresh: a new pair, the used token and an access token refused, bad bodies
    const refreshed = await send('POST', '/auth/refresh', { json: { refresh_token: refresh } })
    expect(refreshed.status).toBe(200)
    expect((await send('POST', '/auth/refresh', { json: { refresh_token: refresh } })).status).toBe(401)
    expect((await send('POST', '/auth/refresh', { json: { refresh_token: access } })).status).toBe(401)
    expect((await send('POST', '/auth/refresh', { json: { refresh_token: '' } })).status).toBe(400)
    expect((await send('POST', '/auth/refresh', { body: 'x', contentType: 'text/plain' })).status).toBe(415)
    const huge = { refresh_token: 'x'.repeat(17_000) }
    expect((await send('POST', '/auth/refresh', { json: huge })).status).toBe(413)
    const current = refreshed.body.data

    // logout's own refusals come after a valid token (R4.6.2)
    const token = current.access_token
    expect((await send('POST', '/auth/delete-refresh-token', { token, body: '{' })).status).toBe(400)
    expect(
      (await send('POST', '/auth/delete-refresh-token', { token, body: 'x', contentType: 'text/plain' }))
        .status,
    ).toBe(415)
    expect((await send('POST', '/auth/delete-refresh-token', { token, json: huge })).status).toBe(413)
    expect((await send('POST', '/auth/delete-refresh-token?scope=every', { token })).status).toBe(400)

    // sessions (§4.11, §4.12): the caller's one session (single mode), and an id that is not one of them
    const sessions = await send('GET', '/auth/sessions', { token })
    expect(sessions.body.data).toHaveLength(1)
    expect((await send('DELETE', `/auth/sessions/${'0'.repeat(32)}`, { token })).status).toBe(404)

    // accounts by e-mail (§4.14 to §4.21), each code read from the development outbox
    const mailbox = mailboxOf(service)
    const sendCode = (json: unknown) => send('POST', '/auth/email/send-code', { json })
    const sendAccountCode = (accessToken: string, json: unknown) =>
      send('POST', '/auth/me/send-code', { token: accessToken, json })
    for (const json of [{ email: 'a@b@c', purpose: 'login' }, { email, purpose: 'verify_email' }, {}]) {
      expect((await sendCode(json)).status).toBe(400)
    }

    // register with a code (§4.3): a wrong one refused, the right one proves the address
    const owner = `owner-${randomUUID()}@example.com`
    expect((await sendCode({ email: owner, purpose: 'register' })).status).toBe(200)
    const registerCode = await mailedCode(mailbox, owner)
    const withCode = (code: string) => ({
      json: { email: owner, password: PASSWORD, verification_code: code },
    })
    expect((await send('POST', '/auth/register', withCode(otherThan(registerCode)))).status).toBe(400)
    expect((await send('POST', '/auth/register', withCode(registerCode))).body.data.email_verified).toBe(true)

    // sign in by code (§4.16): a wrong code is the 401 of a wrong password
    expect((await sendCode({ email: owner, purpose: 'login' })).status).toBe(200)
    const loginCode = await mailedCode(mailbox, owner)
    const codeLogin = (code: string) =>
      send('POST', '/auth/login/email-code', { json: { email: owner, verification_code: code } })
    expect((await codeLogin(otherThan(loginCode))).status).toBe(401)
    expect((await codeLogin('12345')).status).toBe(400)
    expect((await codeLogin(loginCode)).status).toBe(200)

    // reset (§4.17): a refused code and a new password too short are 400
    expect((await sendCode({ email: owner, purpose: 'reset_password' })).status).toBe(200)
    const resetCode = await mailedCode(mailbox, owner)
    const reset = (code: string, newPassword = NEW_PASSWORD) =>
      send('POST', '/auth/password/reset', {
        json: { email: owner, verification_code: code, new_password: newPassword },
      })
    expect((await reset(otherThan(resetCode))).status).toBe(400)
    expect((await reset(resetCode, 'short')).status).toBe(400)
    const afterReset = await reset(resetCode)
    expect(afterReset.status).toBe(200)
    let ownerToken = afterReset.body.data.access_token

    // change of password (§4.18): a wrong current password is a 400, not a 401
    const changePassword = (current: string, next: string) =>
      send('POST', '/auth/password/change', {
        token: ownerToken,
        json: { current_password: current, new_password: next },
      })
    expect((await changePassword(PASSWORD, PASSWORD)).status).toBe(400)
    expect((await changePassword(NEW_PASSWORD, 'short')).status).toBe(400)
    const changed = await changePassword(NEW_PASSWORD, PASSWORD)
    expect(changed.status).toBe(200)
    // a password change ends every session but the one it answers with (R4.18.1), the caller's own included
    ownerToken = changed.body.data.access_token

    // an account registered without a code proves its address (§4.20); a code of no account purpose, or
    // change_email without new_email, is a 400
    const other = `other-${randomUUID()}@example.com`
    const plain = await send('POST', '/auth/register', { json: { email: other, password: PASSWORD } })
    expect(plain.body.data.email_verified).toBe(false)
    const otherToken = plain.body.data.access_token
    for (const json of [{ purpose: 'login' }, { purpose: 'change_email' }]) {
      expect((await sendAccountCode(otherToken, json)).status).toBe(400)
    }
    expect((await sendAccountCode(otherToken, { purpose: 'verify_email' })).status).toBe(200)
    const verifyCode = await mailedCode(mailbox, other)
    const verify = (code: string) =>
      send('POST', '/auth/email/verify', { token: otherToken, json: { verification_code: code } })
    expect((await verify(otherThan(verifyCode))).status).toBe(400)
    expect((await verify('x')).status).toBe(400)
    expect((await verify(verifyCode)).body.data.email_verified).toBe(true)

    // change of address (§4.19): to another account's address a 409, to a new one proved by its code a 200
    const changeEmail = (newEmail: string, code: string) =>
      send('POST', '/auth/email/change', {
        token: ownerToken,
        json: { new_email: newEmail, verification_code: code },
      })
    expect((await sendAccountCode(ownerToken, { purpose: 'change_email', new_email: other })).status).toBe(
      200,
    )
    expect((await changeEmail(other, await mailedCode(mailbox, other))).status).toBe(409)
    const moved = `moved-${randomUUID()}@example.com`
    expect((await sendAccountCode(ownerToken, { purpose: 'change_email', new_email: moved })).status).toBe(
      200,
    )
    const changeCode = await mailedCode(mailbox, moved)
    expect((await changeEmail(moved, otherThan(changeCode))).status).toBe(400)
    expect((await changeEmail('a@b@c', changeCode)).status).toBe(400)
    expect((await changeEmail(moved, changeCode)).body.data).toMatchObject({
      email: moved,
      email_verified: true,
    })

    // the profile (§4.22): a string sets a field, null clears it; a username another account has is a 409
    const putProfile = (accessToken: string, json: unknown) =>
      send('PUT', '/auth/profile', { token: accessToken, json })
    const username = `owner_${randomUUID().slice(0, 8)}`
    const named = await putProfile(ownerToken, {
      username: username.toUpperCase(),
      nickname: ' Owner ',
      bio: 'Line one\nline two',
    })
    expect(named.status).toBe(200)
    expect(named.body.data).toMatchObject({ username, nickname: 'Owner', bio: 'Line one\nline two' })
    expect((await putProfile(ownerToken, { nickname: null, bio: null })).body.data).toMatchObject({
      username,
      nickname: null,
      bio: null,
    })
    expect((await putProfile(otherToken, { username })).status).toBe(409)
    for (const json of [{ username: 'ab' }, { nickname: ' ' }, { bio: 7 }, []]) {
      expect((await putProfile(otherToken, json)).status).toBe(400)
    }
    expect((await send('PUT', '/auth/profile', { token: otherToken, body: '{' })).status).toBe(400)

    // the avatar (§4.23): an image in a form, served at avatar_url until it is removed; a form without the file, a
    // file over 2 MB, one that is no image and a body that is no form are refused
    const uploadAvatar = (form: FormData) => send('POST', '/auth/avatar', { token: ownerToken, form })
    const uploaded = await uploadAvatar(fileForm(await image('jpeg'), 'image/jpeg'))
    expect(uploaded.status).toBe(200)
    const avatarUrl: string = uploaded.body.data.avatar_url
    const served = await send('GET', avatarPath(avatarUrl))
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toMatch(/^image\//)
    expect((await send('GET', `/avatars/${'0'.repeat(32)}`)).status).toBe(404)
    expect((await uploadAvatar(formWithout())).status).toBe(400)
    expect((await uploadAvatar(fileForm(Buffer.alloc(2 * 1024 * 1024 + 1)))).status).toBe(413)
    expect((await uploadAvatar(fileForm('not an image', 'text/plain'))).status).toBe(415)
    const notForm = { token: ownerToken, json: { avatar: 'x' } }
    expect((await send('POST', '/auth/avatar', notForm)).status).toBe(415)
    const removed = await send('DELETE', '/auth/avatar', { token: ownerToken })
    expect(removed.status).toBe(200)
    expect(removed.body.data.avatar_url).toBeNull()
    expect((await send('GET', avatarPath(avatarUrl))).status).toBe(404)
    const replaced = await uploadAvatar(fileForm(await image('png')))
    expect((await send('GET', avatarPath(replaced.body.data.avatar_url))).status).toBe(200)

    // sign-in with providers (§4.24), as far as a provider out of reach lets it go: an unknown provider, a
    // redirect_to of another origin and the unreachable issuer are failure pages; a callback without this browser's
    // state is a failure page of status 200; an unknown code is a 400; an account unlinks only providers it has
    expect((await send('GET', '/auth/oauth/providers')).body.data).toEqual({ providers: ['unreachable'] })
    const page = async (path: string) => {
      const answer = await send('GET', path)
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8')
      return answer.status
    }
    expect(await page('/auth/oauth/nowhere/start')).toBe(404)
    expect(await page('/auth/oauth/unreachable/start?redirect_to=https%3A%2F%2Felsewhere.example%2F')).toBe(
      400,
    )
    expect(await page('/auth/oauth/unreachable/start')).toBe(502)
    expect(await page('/auth/oauth/unreachable/callback?code=x&state=y')).toBe(200)
    expect(await page('/auth/oauth/nowhere/callback?code=x&state=y')).toBe(404)
    const exchange = (init: Send) => send('POST', '/auth/oauth/exchange', init)
    for (const json of [{ code: 'unknown' }, { code: '' }, {}, { code: 'unknown', code_verifier: 7 }]) {
      expect((await exchange({ json })).status).toBe(400)
    }
    expect((await exchange({ body: '{' })).status).toBe(400)
    expect((await exchange({ body: 'code=x', contentType: 'text/plain' })).status).toBe(415)
    expect((await exchange({ json: { code: 'x'.repeat(17_000) } })).status).toBe(413)
    expect((await send('DELETE', '/auth/oauth/unreachable', { token: ownerToken })).status).toBe(404)
    expect((await send('DELETE', '/auth/oauth/Not-A-Name', { token: ownerToken })).status).toBe(400)

    // passkeys (§4.26), by a software authenticator on a page of localhost (development without origins: the relying
    // party localhost, on any port), for an account whose address the code of its registration proved
    const holder = `holder-${randomUUID()}@example.com`
    expect((await sendCode({ email: holder, purpose: 'register' })).status).toBe(200)
    const holderCode = await mailedCode(mailbox, holder)
    const holderAccount = await send('POST', '/auth/register', {
      json: { email: holder, password: PASSWORD, verification_code: holderCode },
    })
    let holderToken: string = holderAccount.body.data.access_token
    const authenticator = new SoftwareAuthenticator('http://localhost:5173')
    const creationOptions = (accessToken: string, json: unknown) =>
      send('POST', '/auth/passkeys/register/options', { token: accessToken, json })
    expect((await creationOptions(holderToken, { password: 'wrong password' })).status).toBe(400)
    expect((await creationOptions(holderToken, {})).status).toBe(400)
    // an address not proved yet: 403
    const unproved = await send('POST', '/auth/register', {
      json: { email: `unproved-${randomUUID()}@example.com`, password: PASSWORD },
    })
    expect((await creationOptions(unproved.body.data.access_token, { password: PASSWORD })).status).toBe(403)
    const creation = await creationOptions(holderToken, { password: PASSWORD })
    expect(creation.status).toBe(200)
    const registerPasskey = (json: unknown) =>
      send('POST', '/auth/passkeys/register/verify', { token: holderToken, json })
    const created = authenticator.create(creation.body.data.options)
    expect((await registerPasskey({ ticket: 'x', credential: created })).status).toBe(400)
    const foreign = authenticator.create(creation.body.data.options, { origin: 'https://elsewhere.example' })
    expect((await registerPasskey({ ticket: creation.body.data.ticket, credential: foreign })).status).toBe(
      400,
    )
    const again = (await creationOptions(holderToken, { password: PASSWORD })).body.data
    const stored = authenticator.create(again.options)
    const passkey = await registerPasskey({ ticket: again.ticket, credential: stored })
    expect(passkey.status).toBe(200)
    expect(passkey.body.data).toMatchObject({ type: 'passkey', name: 'Passkey', last_used_at: null })
    // the same credential again: 409
    const third = (await creationOptions(holderToken, { password: PASSWORD })).body.data
    const storedCredential = authenticator.credentials.find((each) => each.id === stored.id)
    const same = authenticator.create(third.options, { credential: storedCredential })
    expect((await registerPasskey({ ticket: third.ticket, credential: same })).status).toBe(409)
    // a sign-in by the passkey alone, without an address; the ticket is good once
    const requestOptions = (json: unknown) => send('POST', '/auth/passkeys/login/options', { json })
    expect((await requestOptions({ mfa_ticket: 'x' })).status).toBe(400)
    const request = await requestOptions({})
    expect(request.status).toBe(200)
    const passkeyLogin = (json: unknown) => send('POST', '/auth/passkeys/login/verify', { json })
    const assertion = authenticator.get(request.body.data.options, { credential: storedCredential })
    expect((await passkeyLogin({ ticket: request.body.data.ticket })).status).toBe(400)
    const byPasskey = await passkeyLogin({ ticket: request.body.data.ticket, credential: assertion })
    expect(byPasskey.status).toBe(200)
    expect(byPasskey.body.data.email).toBe(holder)
    // the sign-in replaced the session of holderToken (single mode)
    holderToken = byPasskey.body.data.access_token
    expect((await passkeyLogin({ ticket: request.body.data.ticket, credential: assertion })).status).toBe(401)
    for (const path of [
      '/auth/passkeys/login/options',
      '/auth/passkeys/login/verify',
      '/auth/passkeys/register/options',
      '/auth/passkeys/register/verify',
    ]) {
      expect(
        (await send('POST', path, { token: holderToken, body: 'x', contentType: 'text/plain' })).status,
      ).toBe(415)
      expect((await send('POST', path, { token: holderToken, json: huge })).status).toBe(413)
    }

    // second factors (§4.25): an authenticator app, its codes computed by otplib, for an account whose registration's
    // code proved its address; the session of that registration was established before the account had any factor
    const guarded = `guarded-${randomUUID()}@example.com`
    expect((await sendCode({ email: guarded, purpose: 'register' })).status).toBe(200)
    const guardedCode = await mailedCode(mailbox, guarded)
    const guardedAccount = await send('POST', '/auth/register', {
      json: { email: guarded, password: PASSWORD, verification_code: guardedCode },
    })
    let guardedToken: string = guardedAccount.body.data.access_token
    const listFactors = (accessToken: string) => send('GET', '/auth/mfa/factors', { token: accessToken })
    expect((await listFactors(guardedToken)).body.data).toEqual([])
    const setUpTotp = (accessToken: string, json: unknown) =>
      send('POST', '/auth/mfa/totp/setup', { token: accessToken, json })
    // an address not proved yet: 403, before any proof is checked
    expect((await setUpTotp(unproved.body.data.access_token, { password: PASSWORD })).status).toBe(403)
    // neither proof or both, a wrong password, a code never sent: 400
    for (const json of [
      {},
      { password: PASSWORD, verification_code: '000000' },
      { password: 'wrong password' },
      { verification_code: '000000' },
    ]) {
      expect((await setUpTotp(guardedToken, json)).status).toBe(400)
    }
    // with a code of purpose manage_factors: a pending factor
    expect((await sendAccountCode(guardedToken, { purpose: 'manage_factors' })).status).toBe(200)
    const setup = await setUpTotp(guardedToken, { verification_code: await mailedCode(mailbox, guarded) })
    expect(setup.status).toBe(200)
    const { factor_id: totpId, secret: totpSecret } = setup.body.data
    // a session not established with the second factor neither removes a factor nor renews the recovery codes
    const removeFactor = (id: string) => send('DELETE', `/auth/mfa/factors/${id}`, { token: guardedToken })
    const renewRecoveryCodes = () => send('POST', '/auth/mfa/recovery-codes', { token: guardedToken })
    expect((await removeFactor(totpId)).status).toBe(403)
    expect((await renewRecoveryCodes()).status).toBe(403)
    // confirmation: no pending factor of that id is a 404, a code not the app's or not six digits a 400
    const confirmTotp = (json: unknown) =>
      send('POST', '/auth/mfa/totp/confirm', { token: guardedToken, json })
    expect((await confirmTotp({ factor_id: '0'.repeat(32), code: appCode(totpSecret) })).status).toBe(404)
    expect((await confirmTotp({ factor_id: totpId, code: notTheAppCode(totpSecret) })).status).toBe(400)
    expect((await confirmTotp({ factor_id: totpId, code: '12345' })).status).toBe(400)
    const confirmed = await confirmTotp({ factor_id: totpId, code: appCode(totpSecret) })
    expect(confirmed.status).toBe(200)
    expect(confirmed.body.data.recovery_codes).toHaveLength(10)
    // the factor is listed, and the confirming session now counts as established with the second factor: it renews
    // the recovery codes, the set of the confirmation void
    expect((await listFactors(guardedToken)).body.data).toMatchObject([
      { id: totpId, type: 'totp', name: 'Authenticator app', last_used_at: expect.any(String) },
    ])
    const renewed = await renewRecoveryCodes()
    expect(renewed.status).toBe(200)
    const recoveryCodes: string[] = renewed.body.data.recovery_codes
    // the password now answers the challenge, and no tokens
    const challenge = async () => {
      const answer = await send('POST', '/auth/login', { json: { email: guarded, password: PASSWORD } })
      expect(answer.status).toBe(200)
      expect(answer.body.data).toEqual({
        mfa_required: true,
        mfa_ticket: expect.any(String),
        factors: ['totp', 'recovery_code'],
      })
      return answer.body.data.mfa_ticket as string
    }
    const verifySecondFactor = (json: unknown) => send('POST', '/auth/mfa/verify', { json })
    let mfaTicket = await challenge()
    // neither a code nor a recovery code, or both: 400, the ticket left as it was
    for (const json of [
      {},
      { mfa_ticket: mfaTicket },
      { mfa_ticket: mfaTicket, code: '000000', recovery_code: recoveryCodes[0] },
    ]) {
      expect((await verifySecondFactor(json)).status).toBe(400)
    }
    // the step of the confirmation's code is used: the app's code of the next step (one step of drift) completes it;
    // an unknown ticket, and a wrong code, are the one 401
    const nextCode = appCode(totpSecret, 1)
    expect((await verifySecondFactor({ mfa_ticket: 'A'.repeat(43), code: nextCode })).status).toBe(401)
    expect(
      (await verifySecondFactor({ mfa_ticket: mfaTicket, code: notTheAppCode(totpSecret) })).status,
    ).toBe(401)
    const verified = await verifySecondFactor({ mfa_ticket: mfaTicket, code: nextCode })
    expect(verified.status).toBe(200)
    expect(verified.body.data).toMatchObject({ email: guarded, access_token: expect.any(String) })
    // the ticket is good once
    expect((await verifySecondFactor({ mfa_ticket: mfaTicket, code: nextCode })).status).toBe(401)
    // a new challenge: the code accepted is refused (no replay), so is a code of the confirmation's set, and one of the
    // renewed set completes it; the sign-in replaces the session (single mode)
    mfaTicket = await challenge()
    expect((await verifySecondFactor({ mfa_ticket: mfaTicket, code: nextCode })).status).toBe(401)
    const voidCode = confirmed.body.data.recovery_codes[0]
    expect((await verifySecondFactor({ mfa_ticket: mfaTicket, recovery_code: voidCode })).status).toBe(401)
    const recovered = await verifySecondFactor({ mfa_ticket: mfaTicket, recovery_code: recoveryCodes[0] })
    expect(recovered.status).toBe(200)
    guardedToken = recovered.body.data.access_token
    // an id that is not one of the caller's factors: 404
    for (const id of ['0'.repeat(32), 'not-a-factor']) expect((await removeFactor(id)).status).toBe(404)
    // a second authenticator started with the password, left pending for the failures below
    const pending = await setUpTotp(guardedToken, { password: PASSWORD })
    expect(pending.status).toBe(200)
    const { factor_id: pendingId, secret: pendingSecret } = pending.body.data
    const confirmPending = () => confirmTotp({ factor_id: pendingId, code: appCode(pendingSecret) })
    // the bodies they refuse: not JSON, over 16 KiB (with a valid token; the factor of the DELETE stays)
    for (const [method, path] of [
      ['POST', '/auth/mfa/totp/setup'],
      ['POST', '/auth/mfa/totp/confirm'],
      ['POST', '/auth/mfa/verify'],
      ['DELETE', `/auth/mfa/factors/${totpId}`],
      ['POST', '/auth/mfa/recovery-codes'],
    ] as const) {
      const token = guardedToken
      expect((await send(method, path, { token, body: 'x', contentType: 'text/plain' })).status).toBe(415)
      expect((await send(method, path, { token, json: huge })).status).toBe(413)
    }

    // the bodies every e-mail endpoint refuses: not JSON, over 16 KiB (each protected one with a valid token)
    for (const path of ['/auth/email/send-code', '/auth/login/email-code', '/auth/password/reset']) {
      expect((await send('POST', path, { body: 'x', contentType: 'text/plain' })).status).toBe(415)
      expect((await send('POST', path, { json: huge })).status).toBe(413)
    }
    for (const [method, path] of [
      ...PROTECTED_EMAIL_PATHS.map((protectedPath) => ['POST', protectedPath] as const),
      ['PUT', '/auth/profile'],
    ] as const) {
      expect(
        (await send(method, path, { token: ownerToken, body: 'x', contentType: 'text/plain' })).status,
      ).toBe(415)
      expect((await send(method, path, { token: ownerToken, json: huge })).status).toBe(413)
    }

    // leaving (§4.21): neither proof or both, a wrong password and a refused code are 400; the code deletes, and
    // then the token of the account gone is a 401; the password deletes too
    expect((await sendAccountCode(otherToken, { purpose: 'delete_account' })).status).toBe(200)
    const deleteCode = await mailedCode(mailbox, other)
    const leave = (accessToken: string, json: unknown) =>
      send('POST', '/auth/delete', { token: accessToken, json })
    for (const json of [
      {},
      { password: PASSWORD, verification_code: deleteCode },
      { password: 'wrong password' },
      { verification_code: otherThan(deleteCode) },
    ]) {
      expect((await leave(otherToken, json)).status).toBe(400)
    }
    expect((await leave(otherToken, { verification_code: deleteCode })).status).toBe(200)
    expect((await leave(otherToken, { password: PASSWORD })).status).toBe(401)
    expect((await leave(ownerToken, { password: PASSWORD })).status).toBe(200)

    // requests that match no operation
    expect((await send('GET', '/nope')).status).toBe(404)
    expect((await send('GET', '/auth/me/')).status).toBe(404)
    expect((await send('GET', '/auth/login')).status).toBe(405)
    expect((await send('DELETE', '/auth/me')).status).toBe(405)
    expect((await send('HEAD', '/auth/refresh')).status).toBe(405)

    // a store that fails (R7.1): 500 everywhere it is called, and /health 503
    failure = 'lost'
    expect(
      (await send('POST', '/auth/register', { json: { email: `other-${email}`, password: PASSWORD } }))
        .status,
    ).toBe(500)
    expect((await send('POST', '/auth/login', { json: { email, password: PASSWORD } })).status).toBe(500)
    expect(
      (await send('POST', '/auth/refresh', { json: { refresh_token: current.refresh_token } })).status,
    ).toBe(500)
    expect((await send('GET', '/auth/me', { token })).status).toBe(500)
    expect((await send('POST', '/auth/delete-refresh-token', { token })).status).toBe(500)
    expect((await send('GET', '/auth/sessions', { token })).status).toBe(500)
    expect((await send('DELETE', `/auth/sessions/${sessions.body.data[0].id}`, { token })).status).toBe(500)
    const lost = `lost-${randomUUID()}@example.com`
    const someCode = '000000'
    expect((await sendCode({ email: lost, purpose: 'login' })).status).toBe(500)
    expect((await sendAccountCode(token, { purpose: 'verify_email' })).status).toBe(500)
    expect(
      (await send('POST', '/auth/login/email-code', { json: { email, verification_code: someCode } })).status,
    ).toBe(500)
    const resetJson = { email, verification_code: someCode, new_password: NEW_PASSWORD }
    expect((await send('POST', '/auth/password/reset', { json: resetJson })).status).toBe(500)
    const changeJson = { current_password: PASSWORD, new_password: NEW_PASSWORD }
    expect((await send('POST', '/auth/password/change', { token, json: changeJson })).status).toBe(500)
    const emailJson = { new_email: lost, verification_code: someCode }
    expect((await send('POST', '/auth/email/change', { token, json: emailJson })).status).toBe(500)
    const verifyJson = { verification_code: someCode }
    expect((await send('POST', '/auth/email/verify', { token, json: verifyJson })).status).toBe(500)
    expect((await send('POST', '/auth/delete', { token, json: { password: PASSWORD } })).status).toBe(500)
    const profileJson = { nickname: 'Changed' }
    expect((await send('PUT', '/auth/profile', { token, json: profileJson })).status).toBe(500)
    const png = await image('png')
    expect((await send('POST', '/auth/avatar', { token, form: fileForm(png) })).status).toBe(500)
    expect((await send('DELETE', '/auth/avatar', { token })).status).toBe(500)
    expect((await send('GET', avatarPath(replaced.body.data.avatar_url))).status).toBe(500)
    expect((await send('GET', '/auth/oauth/unreachable/start')).status).toBe(500)
    // a state and a code of the form the service issues (43 characters of base64url), so that they are looked up
    const secret = 'A'.repeat(43)
    const callback = `/auth/oauth/unreachable/callback?state=${secret}`
    expect((await send('GET', callback, { cookie: `tessera_oauth=${secret}` })).status).toBe(500)
    expect((await exchange({ json: { code: secret } })).status).toBe(500)
    expect((await send('DELETE', '/auth/oauth/unreachable', { token })).status).toBe(500)
    const passkeyTicket = { ticket: secret }
    expect((await requestOptions({})).status).toBe(500)
    expect((await passkeyLogin({ ...passkeyTicket, credential: assertion })).status).toBe(500)
    expect((await creationOptions(holderToken, { password: PASSWORD })).status).toBe(500)
    expect((await registerPasskey({ ...passkeyTicket, credential: created })).status).toBe(500)
    expect((await setUpTotp(guardedToken, { password: PASSWORD })).status).toBe(500)
    expect((await confirmPending()).status).toBe(500)
    expect((await verifySecondFactor({ mfa_ticket: secret, code: '000000' })).status).toBe(500)
    expect((await listFactors(guardedToken)).status).toBe(500)
    expect((await removeFactor(totpId)).status).toBe(500)
    expect((await renewRecoveryCodes()).status).toBe(500)
    // a write sent with no answer (R7.3): 503, retry
    failure = 'outcome unknown'
    expect(
      (await send('POST', '/auth/register', { json: { email: `other-${email}`, password: PASSWORD } }))
        .status,
    ).toBe(503)
    expect(
      (await send('POST', '/auth/refresh', { json: { refresh_token: current.refresh_token } })).status,
    ).toBe(503)
    expect((await send('POST', '/auth/delete-refresh-token', { token })).status).toBe(503)
    expect((await send('DELETE', `/auth/sessions/${sessions.body.data[0].id}`, { token })).status).toBe(503)
    // the code stored, or a try at one counted, or the session of a changed password: each may have happened
    expect((await sendCode({ email: lost, purpose: 'login' })).status).toBe(503)
    expect((await sendAccountCode(token, { purpose: 'verify_email' })).status).toBe(503)
    expect(
      (await send('POST', '/auth/login/email-code', { json: { email, verification_code: someCode } })).status,
    ).toBe(503)
    expect((await send('POST', '/auth/password/reset', { json: resetJson })).status).toBe(503)
    expect((await send('POST', '/auth/password/change', { token, json: changeJson })).status).toBe(503)
    expect((await send('POST', '/auth/email/change', { token, json: emailJson })).status).toBe(503)
    expect((await send('POST', '/auth/email/verify', { token, json: verifyJson })).status).toBe(503)
    expect((await send('POST', '/auth/delete', { token, json: verifyJson })).status).toBe(503)
    expect((await send('PUT', '/auth/profile', { token, json: profileJson })).status).toBe(503)
    // the avatar stored or removed, a sign-in's state stored or used up, a one-time code used, a link removed: each
    // may have happened
    expect((await send('POST', '/auth/avatar', { token, form: fileForm(png) })).status).toBe(503)
    expect((await send('DELETE', '/auth/avatar', { token })).status).toBe(503)
    expect((await send('GET', '/auth/oauth/unreachable/start')).status).toBe(503)
    expect((await send('GET', callback, { cookie: `tessera_oauth=${secret}` })).status).toBe(503)
    expect((await exchange({ json: { code: secret } })).status).toBe(503)
    expect((await send('DELETE', '/auth/oauth/unreachable', { token })).status).toBe(503)
    // a ceremony's ticket stored or used up: each may have happened
    expect((await requestOptions({})).status).toBe(503)
    expect((await passkeyLogin({ ...passkeyTicket, credential: assertion })).status).toBe(503)
    expect((await creationOptions(holderToken, { password: PASSWORD })).status).toBe(503)
    expect((await registerPasskey({ ...passkeyTicket, credential: created })).status).toBe(503)
    // a factor stored, confirmed or removed, a challenge's ticket used up, recovery codes replaced: each may have
    // happened
    expect((await setUpTotp(guardedToken, { password: PASSWORD })).status).toBe(503)
    expect((await confirmPending()).status).toBe(503)
    expect((await verifySecondFactor({ mfa_ticket: secret, code: '000000' })).status).toBe(503)
    expect((await removeFactor(totpId)).status).toBe(503)
    expect((await renewRecoveryCodes()).status).toBe(503)
    failure = 'probe'
    expect((await send('GET', '/health')).status).toBe(503)
    failure = 'none'
    clockFails = true
    try {
      expect((await send('GET', '/info')).status).toBe(500)
    } finally {
      clockFails = false
    }

    // and the flow's end once the store is back; removing the last factor turns the second step off
    expect((await removeFactor(totpId)).status).toBe(200)
    expect((await listFactors(guardedToken)).body.data).toEqual([])
    const unguarded = await send('POST', '/auth/login', { json: { email: guarded, password: PASSWORD } })
    expect(unguarded.body.data).toMatchObject({ email: guarded, access_token: expect.any(String) })
    expect((await send('DELETE', `/auth/sessions/${sessions.body.data[0].id}`, { token })).status).toBe(200)
    expect((await send('POST', '/auth/delete-refresh-token', { token })).status).toBe(200)
    // a few hundred requests, some hashing a password or decoding an image: more than the default 30 s when the
    // machine is busy
  }, 120_000)

  it('429: past RATE_LIMIT_PER_MINUTE on register, refresh and the e-mail endpoints (R8.1), past the send limits (R4.14.6), and on failed logins from one address (R8.4)', async () => {
    const { send } = await listen({ env: { RATE_LIMIT_PER_MINUTE: '2' } })
    /** The statuses of one request per body, in turn. */
    const statuses = async (path: string, bodies: unknown[], token?: string) => {
      const seen: number[] = []
      for (const json of bodies) seen.push((await send('POST', path, { json, token })).status)
      return seen
    }
    const thrice = (json: unknown) => [json, json, json]
    /** The statuses of `times` requests, one after the other. */
    const repeated = async (times: number, request: () => Promise<{ status: number }>) => {
      const seen: number[] = []
      for (let i = 0; i < times; i++) seen.push((await request()).status)
      return seen
    }
    // the account of the protected endpoints below: register's first request of the minute
    const email = `limited-${randomUUID()}@example.com`
    const registered = await send('POST', '/auth/register', { json: { email, password: PASSWORD } })
    expect(registered.status).toBe(200)
    const token = registered.body.data.access_token
    expect(await statuses('/auth/register', thrice({}))).toEqual([400, 429, 429])
    expect(await statuses('/auth/refresh', thrice({ refresh_token: 'not.a.token' }))).toEqual([401, 401, 429])
    // a second code to one address for one purpose within EMAIL_CODE_RESEND_SECONDS, then the route's own limit
    const code = { email, purpose: 'login' }
    const elsewhere = { email: `elsewhere-${email}`, purpose: 'login' }
    expect(await statuses('/auth/email/send-code', [code, code, elsewhere])).toEqual([200, 429, 429])
    const verify = { purpose: 'verify_email' }
    const deletion = { purpose: 'delete_account' }
    expect(await statuses('/auth/me/send-code', [verify, verify, deletion], token)).toEqual([200, 429, 429])
    // addresses without a code: refused every time, until the route's limit
    const nobody = `nobody-${randomUUID()}@example.com`
    const noCode = { email: nobody, verification_code: '000000' }
    expect(await statuses('/auth/login/email-code', thrice(noCode))).toEqual([401, 401, 429])
    const reset = { ...noCode, new_password: PASSWORD }
    expect(await statuses('/auth/password/reset', thrice(reset))).toEqual([400, 400, 429])
    for (const path of PROTECTED_EMAIL_PATHS.slice(1)) {
      expect(await statuses(path, thrice({}), token)).toEqual([400, 400, 429])
    }
    expect(
      await repeated(3, () => send('PUT', '/auth/profile', { token, json: { username: 'ab' } })),
    ).toEqual([400, 400, 429])
    // the avatar and the provider routes: every request counted
    const noFile = () => send('POST', '/auth/avatar', { token, form: formWithout() })
    expect(await repeated(3, noFile)).toEqual([400, 400, 429])
    expect(await repeated(3, () => send('DELETE', '/auth/avatar', { token }))).toEqual([200, 200, 429])
    for (const step of ['start', 'callback']) {
      expect(await repeated(3, () => send('GET', `/auth/oauth/nowhere/${step}`))).toEqual([404, 404, 429])
    }
    expect(await statuses('/auth/oauth/exchange', thrice({ code: 'unknown' }))).toEqual([400, 400, 429])
    const unlink = () => send('DELETE', '/auth/oauth/nowhere', { token })
    expect(await repeated(3, unlink)).toEqual([404, 404, 429])
    // passkeys: every request counted
    expect(await statuses('/auth/passkeys/login/options', thrice({}))).toEqual([200, 200, 429])
    expect(await statuses('/auth/passkeys/login/verify', thrice({}))).toEqual([400, 400, 429])
    expect(await statuses('/auth/passkeys/register/options', thrice({}), token)).toEqual([400, 400, 429])
    expect(await statuses('/auth/passkeys/register/verify', thrice({}), token)).toEqual([400, 400, 429])
    // second factors: every request counted
    expect(await statuses('/auth/mfa/verify', thrice({}))).toEqual([400, 400, 429])
    expect(await statuses('/auth/mfa/totp/setup', thrice({}), token)).toEqual([400, 400, 429])
    expect(await statuses('/auth/mfa/totp/confirm', thrice({}), token)).toEqual([400, 400, 429])
    const removeFactor = () => send('DELETE', `/auth/mfa/factors/${'0'.repeat(32)}`, { token })
    expect(await repeated(3, removeFactor)).toEqual([403, 403, 429])
    const renewRecoveryCodes = () => send('POST', '/auth/mfa/recovery-codes', { token })
    expect(await repeated(3, renewRecoveryCodes)).toEqual([403, 403, 429])
    // an e-mail without an account: no address is remembered for it (R8.6)
    const unknown = { email: `nobody-${randomUUID()}@example.com`, password: PASSWORD }
    expect(await statuses('/auth/login', thrice(unknown))).toEqual([401, 401, 429])
  })

  it('503: the Argon2 queue full, for register, login, password reset and change, and deletion (R8.2)', async () => {
    const { service, send } = await listen({
      // one thread, nothing waiting, an expensive hash: of 8 requests arriving together, most are turned away
      env: {
        ...RATE_LIMIT,
        AUTH_HASH_CONCURRENCY: '1',
        AUTH_HASH_QUEUE_LIMIT: '0',
        AUTH_ARGON2_MEMORY_KIB: '65536',
        AUTH_ARGON2_TIME_COST: '2',
      },
    })
    const email = `busy-${randomUUID()}@example.com`
    expect((await send('POST', '/auth/register', { json: { email, password: PASSWORD } })).status).toBe(200)
    const together = (path: string, body: (i: number) => unknown, token?: string) =>
      Promise.all(Array.from({ length: 8 }, (_, i) => send('POST', path, { json: body(i), token })))
    const logins = await together('/auth/login', () => ({ email, password: PASSWORD }))
    expect(logins.map((answer) => answer.status)).toContain(503)
    const registrations = await together('/auth/register', (i) => ({
      email: `${i}-${email}`,
      password: PASSWORD,
    }))
    expect(registrations.map((answer) => answer.status)).toContain(503)

    // reset, change and deletion hash or check a password too: accounts made one after the other (0 to 7 reset, each
    // with a code of its own, 8 changes its password, 9 leaves)
    const mailbox = mailboxOf(service)
    const accounts: Array<{ email: string; token: string }> = []
    for (let i = 0; i < 10; i++) {
      const address = `account-${i}-${email}`
      const made = await send('POST', '/auth/register', { json: { email: address, password: PASSWORD } })
      expect(made.status).toBe(200)
      accounts.push({ email: address, token: made.body.data.access_token })
    }
    const resets = accounts.slice(0, 8)
    for (const account of resets) {
      const sent = await send('POST', '/auth/email/send-code', {
        json: { email: account.email, purpose: 'reset_password' },
      })
      expect(sent.status).toBe(200)
    }
    const resetBodies: unknown[] = []
    for (const account of resets) {
      const code = await mailedCode(mailbox, account.email)
      resetBodies.push({ email: account.email, verification_code: code, new_password: NEW_PASSWORD })
    }
    const resetAnswers = await together('/auth/password/reset', (i) => resetBodies[i])
    expect(resetAnswers.map((answer) => answer.status)).toContain(503)
    const change = { current_password: PASSWORD, new_password: NEW_PASSWORD }
    const changes = await together('/auth/password/change', () => change, accounts[8]!.token)
    expect(changes.map((answer) => answer.status)).toContain(503)
    const deletions = await together('/auth/delete', () => ({ password: PASSWORD }), accounts[9]!.token)
    expect(deletions.map((answer) => answer.status)).toContain(503)
  })

  it('503: no mail can be sent, in production without SMTP_URL (R4.14.7)', async () => {
    const { send } = await listen({ env: { ...RATE_LIMIT, NODE_ENV: 'production' } })
    const email = `unmailed-${randomUUID()}@example.com`
    expect((await send('POST', '/auth/email/send-code', { json: { email, purpose: 'login' } })).status).toBe(
      503,
    )
    const registered = await send('POST', '/auth/register', { json: { email, password: PASSWORD } })
    expect(registered.status).toBe(200)
    const token = registered.body.data.access_token
    const json = { purpose: 'verify_email' }
    expect((await send('POST', '/auth/me/send-code', { token, json })).status).toBe(503)
  })

  it('403: production behind TRUST_PROXY, a request with credentials that did not come over HTTPS (R5.7.2)', async () => {
    const { send } = await listen({
      // FRONTEND_ORIGIN: a relying party for passkeys, whose routes production serves only with an origin (§4.26)
      env: {
        ...RATE_LIMIT,
        NODE_ENV: 'production',
        TRUST_PROXY: '192.0.2.1',
        FRONTEND_ORIGIN: 'https://app.example',
      },
    })
    const json = { email: 'a@example.com', password: PASSWORD }
    expect((await send('POST', '/auth/register', { json })).status).toBe(403)
    expect((await send('POST', '/auth/login', { json })).status).toBe(403)
    expect((await send('POST', '/auth/refresh', { json: { refresh_token: 'x' } })).status).toBe(403)
    expect((await send('POST', '/auth/delete-refresh-token', { token: 'x' })).status).toBe(403)
    expect((await send('GET', '/auth/me', { token: 'x' })).status).toBe(403)
    expect((await send('GET', '/auth/sessions', { token: 'x' })).status).toBe(403)
    expect((await send('DELETE', `/auth/sessions/${'0'.repeat(32)}`, { token: 'x' })).status).toBe(403)
    const code = { email: json.email, verification_code: '000000' }
    const expectRefused = async (path: string, body: unknown, token?: string) =>
      expect((await send('POST', path, { json: body, token })).status).toBe(403)
    await expectRefused('/auth/email/send-code', { email: json.email, purpose: 'login' })
    await expectRefused('/auth/login/email-code', code)
    await expectRefused('/auth/password/reset', { ...code, new_password: PASSWORD })
    for (const path of PROTECTED_EMAIL_PATHS) await expectRefused(path, {}, 'x')
    expect((await send('PUT', '/auth/profile', { token: 'x', json: {} })).status).toBe(403)
    expect((await send('POST', '/auth/avatar', { token: 'x', form: formWithout() })).status).toBe(403)
    expect((await send('DELETE', '/auth/avatar', { token: 'x' })).status).toBe(403)
    expect((await send('GET', '/auth/oauth/providers')).status).toBe(403)
    expect((await send('GET', '/auth/oauth/google/start')).status).toBe(403)
    expect((await send('GET', '/auth/oauth/google/callback?code=x&state=y')).status).toBe(403)
    await expectRefused('/auth/oauth/exchange', { code: 'x' })
    expect((await send('DELETE', '/auth/oauth/google', { token: 'x' })).status).toBe(403)
    await expectRefused('/auth/passkeys/login/options', {})
    await expectRefused('/auth/passkeys/login/verify', {})
    await expectRefused('/auth/passkeys/register/options', {}, 'x')
    await expectRefused('/auth/passkeys/register/verify', {}, 'x')
    await expectRefused('/auth/mfa/totp/setup', { password: PASSWORD }, 'x')
    await expectRefused('/auth/mfa/totp/confirm', { factor_id: '0'.repeat(32), code: '000000' }, 'x')
    await expectRefused('/auth/mfa/verify', { mfa_ticket: 'A'.repeat(43), code: '000000' })
    expect((await send('GET', '/auth/mfa/factors', { token: 'x' })).status).toBe(403)
    expect((await send('DELETE', `/auth/mfa/factors/${'0'.repeat(32)}`, { token: 'x' })).status).toBe(403)
    expect((await send('POST', '/auth/mfa/recovery-codes', { token: 'x' })).status).toBe(403)
    const user = '/admin/users/1000000001'
    expect((await send('GET', '/admin/users', { token: 'x' })).status).toBe(403)
    expect((await send('GET', user, { token: 'x' })).status).toBe(403)
    expect((await send('PUT', user, { token: 'x', json: { status: 'active' } })).status).toBe(403)
    expect((await send('POST', `${user}/revoke`, { token: 'x' })).status).toBe(403)
    expect((await send('POST', `${user}/mfa-reset`, { token: 'x' })).status).toBe(403)
    expect((await send('DELETE', user, { token: 'x' })).status).toBe(403)
    expect((await send('GET', '/admin/audit', { token: 'x' })).status).toBe(403)
  })

  it('R4.13.1 the key sets of EdDSA and ES256, and their discovery documents', async () => {
    for (const algorithm of ['EdDSA', 'ES256']) {
      const { send } = await listen({ env: { AUTH_JWT_ALGORITHM: algorithm } })
      expect((await send('GET', '/.well-known/jwks.json')).body.keys).toHaveLength(1)
      const discovery = await send('GET', '/.well-known/openid-configuration')
      expect(discovery.body.id_token_signing_alg_values_supported).toEqual([algorithm])
    }
  })

  it('R4.24 a sign-in with a real OpenID provider: the redirects to it and back, the exchange of its code, unlinking', async () => {
    // the service as a process of its own, which trusts the provider's certificate (NODE_EXTRA_CA_CERTS is read at
    // start, so a service in this process cannot); its providers `first` and `second` are one OpenID provider, so
    // that one account can have both
    const certificate = await makeCertificate(temp.path, 'contract-provider')
    const port = await freePort()
    const server = api.document.servers[0].url.replace(/\/$/, '')
    const base = `http://127.0.0.1:${port}${server}`
    const names = ['first', 'second']
    const provider = await startOidcProvider({
      dir: temp.path,
      certificate,
      redirectUris: names.map((name) => `${base}/auth/oauth/${name}/callback`),
    })
    const instance = await backend.setup()
    let service: RunningService | undefined
    try {
      service = await startProcess({
        ...instance.env,
        ...RATE_LIMIT,
        ...(server === '' ? {} : { BASE_PATH: server }),
        PORT: String(port),
        PUBLIC_URL: base,
        OAUTH_PROVIDERS: names.join(','),
        ...Object.fromEntries(
          names.flatMap((name) => [
            [`OAUTH_${name.toUpperCase()}_ISSUER`, provider.issuer],
            [`OAUTH_${name.toUpperCase()}_CLIENT_ID`, provider.clientId],
            [`OAUTH_${name.toUpperCase()}_CLIENT_SECRET`, provider.clientSecret],
          ]),
        ),
        NODE_EXTRA_CA_CERTS: certificate.certFile,
      })
      const send = (method: string, path: string, init?: Send) => sendTo(base, method, path, init)
      /** The state cookie a start set, as the browser sends it back. */
      const stateCookie = (started: Received) => started.headers.get('set-cookie')?.split(';')[0] ?? ''
      /**
       * The provider's part of a sign-in, in a browser of its own (login and consent finished at once): the path and
       * query of the callback it sends the browser back to, not requested yet.
       */
      const throughProvider = async (started: Received): Promise<string> => {
        const back: URL[] = []
        await new TestBrowser({ ca: certificate.cert }).navigate(
          started.headers.get('location') ?? '',
          (next) => {
            if (!next.href.startsWith(`${base}/`)) return false
            back.push(next)
            return true
          },
        )
        if (back[0] === undefined) throw new Error('the provider did not send the browser back')
        return `${back[0].pathname.slice(server.length)}${back[0].search}`
      }
      const email = `provider-${randomUUID()}@example.com`
      provider.setAccount({ sub: `contract-${randomUUID()}`, email, email_verified: true, name: 'Ada' })

      // with redirect_to and the application's PKCE challenge: back at the application with a one-time code, which
      // the exchange with the challenge's verifier turns into a login; without a challenge, a 400 page
      const application = `${new URL(base).origin}/signed-in`
      const { verifier, challenge } = pkcePair()
      const withoutChallenge = await send(
        'GET',
        `/auth/oauth/first/start?redirect_to=${encodeURIComponent(application)}`,
      )
      expect(withoutChallenge.status).toBe(400)
      const started = await send(
        'GET',
        `/auth/oauth/first/start?${new URLSearchParams({ redirect_to: application, code_challenge: challenge })}`,
      )
      expect(started.status).toBe(302)
      const returned = await send('GET', await throughProvider(started), { cookie: stateCookie(started) })
      expect(returned.status).toBe(302)
      const code = new URL(returned.headers.get('location') ?? '').searchParams.get('code')
      const exchanged = await send('POST', '/auth/oauth/exchange', {
        json: { code, code_verifier: verifier },
      })
      expect(exchanged.status).toBe(200)
      expect(exchanged.body.data).toMatchObject({ email, password_set: false, providers: ['first'] })
      const token = exchanged.body.data.access_token
      // a new account without a password: the provider is its only way in
      expect((await send('DELETE', '/auth/oauth/first', { token })).status).toBe(409)

      // in a popup: the page posts the login answer; the provider vouches for the address, so it links the account
      const popup = await send('GET', '/auth/oauth/second/start')
      expect(popup.status).toBe(302)
      const page = await send('GET', await throughProvider(popup), { cookie: stateCookie(popup) })
      expect(page.status).toBe(200)
      const popupResult = pageResult(page.text).message
      expect(popupResult).toMatchObject({ success: true, provider: 'second' })
      // that sign-in replaced the session of `token` (single mode), which can no longer change anything (R5.3.1)
      expect((await send('DELETE', '/auth/oauth/first', { token })).status).toBe(401)
      const unlinked = await send('DELETE', '/auth/oauth/first', { token: popupResult.data?.access_token })
      expect(unlinked.status).toBe(200)
      expect(unlinked.body.data.providers).toEqual(['second'])
    } finally {
      await service?.stop()
      await provider.stop()
      await instance.teardown()
    }
  }, 90_000)

  it('the admin API (§4.27): its successes, 400, 401, 403, 404, 409, 413, 415, 429, and 500/503 of a failing store', async () => {
    let failure: 'none' | 'lost' | 'outcome unknown' = 'none'
    const { service, send } = await listen({
      env: { ...RATE_LIMIT, ADMIN_REQUIRE_MFA: 'false' },
      wrapStores: (stores: Stores) =>
        withInjectedFailures(
          withInjectedFailures(stores, () => failure === 'lost', { stores: ['users'] }),
          () => failure === 'outcome unknown',
          {
            writes: ['setStatus', 'endAll', 'removeAll', 'retire'],
            outcomeUnknown: true,
            stores: ['users', 'sessions', 'factors'],
          },
        ),
    })
    /** A registered account, its access token, and (for an admin) ADMIN_ROLE given in the store. */
    const account = async (role?: string) => {
      const email = `admin-contract-${randomUUID()}@example.com`
      const registered = await send('POST', '/auth/register', { json: { email, password: PASSWORD } })
      expect(registered.status).toBe(200)
      const { id, access_token: token } = registered.body.data
      if (role !== undefined) await service.stores.users.setRole(id, role, new Date().toISOString())
      return { id: id as string, token: token as string }
    }
    const admin = await account('tessera-admin')
    const user = await account()
    const target = () => account()
    const path = (id: string, rest = '') => `/admin/users/${id}${rest}`

    // the successes
    const listed = await send('GET', '/admin/users?limit=2', { token: admin.token })
    expect(listed.status).toBe(200)
    expect(
      (
        await send('GET', `/admin/users?query=admin-contract&after=${listed.body.data.users[0].id}`, {
          token: admin.token,
        })
      ).status,
    ).toBe(200)
    const one = await target()
    expect((await send('GET', path(one.id), { token: admin.token })).status).toBe(200)
    expect((await send('PUT', path(one.id), { token: admin.token, json: { role: 'support' } })).status).toBe(
      200,
    )
    expect((await send('POST', path(one.id, '/revoke'), { token: admin.token })).status).toBe(200)
    expect((await send('POST', path(one.id, '/mfa-reset'), { token: admin.token })).status).toBe(200)
    expect((await send('DELETE', path(one.id), { token: admin.token })).status).toBe(204)
    await service.flushAudit()
    const trail = await send('GET', '/admin/audit?limit=1', { token: admin.token })
    expect(trail.status).toBe(200)
    expect(
      (
        await send('GET', `/admin/audit?after=${trail.body.data.next}&kind=registered&since=0`, {
          token: admin.token,
        })
      ).status,
    ).toBe(200)

    // 400, 404, 409
    expect((await send('GET', '/admin/users?limit=0', { token: admin.token })).status).toBe(400)
    expect((await send('GET', '/admin/users?after=x', { token: admin.token })).status).toBe(400)
    expect((await send('GET', '/admin/audit?since=yesterday', { token: admin.token })).status).toBe(400)
    expect((await send('GET', '/admin/audit?user=1', { token: admin.token })).status).toBe(400)
    expect((await send('GET', '/admin/audit?after=x', { token: admin.token })).status).toBe(400)
    const other = await target()
    for (const json of [{}, { role: 'Not A Role' }, { status: 'gone' }])
      expect((await send('PUT', path(other.id), { token: admin.token, json })).status).toBe(400)
    const nobody = '1000000001'
    expect((await send('GET', path(nobody), { token: admin.token })).status).toBe(404)
    expect((await send('PUT', path(nobody), { token: admin.token, json: { status: 'active' } })).status).toBe(
      404,
    )
    expect((await send('POST', path(nobody, '/revoke'), { token: admin.token })).status).toBe(404)
    expect((await send('POST', path(nobody, '/mfa-reset'), { token: admin.token })).status).toBe(404)
    expect((await send('DELETE', path(nobody), { token: admin.token })).status).toBe(404)
    expect((await send('PUT', path(admin.id), { token: admin.token, json: { role: 'user' } })).status).toBe(
      409,
    )
    expect((await send('DELETE', path(admin.id), { token: admin.token })).status).toBe(409)

    // 401 and 403 (the HTTPS 403 is in the production test below)
    const every = [
      ['GET', '/admin/users'],
      ['GET', path(other.id)],
      ['PUT', path(other.id)],
      ['POST', path(other.id, '/revoke')],
      ['POST', path(other.id, '/mfa-reset')],
      ['DELETE', path(other.id)],
      ['GET', '/admin/audit'],
    ] as const
    for (const [method, url] of every) {
      const json = method === 'PUT' ? { status: 'disabled' } : undefined
      expect((await send(method, url, { json })).status).toBe(401)
      expect((await send(method, url, { json, token: user.token })).status).toBe(403)
    }
    // 413 and 415 of the writes: the body is read before the admin check
    for (const [method, url] of every.filter(([method]) => method !== 'GET')) {
      expect(
        (await send(method, url, { token: user.token, json: { role: 'x'.repeat(17_000) } })).status,
      ).toBe(413)
      expect(
        (await send(method, url, { token: user.token, body: 'role=x', contentType: 'text/plain' })).status,
      ).toBe(415)
    }

    // 500: the store of the accounts fails, for the admin check itself
    failure = 'lost'
    for (const [method, url] of every) {
      const json = method === 'PUT' ? { status: 'disabled' } : undefined
      expect((await send(method, url, { json, token: admin.token })).status).toBe(500)
    }
    failure = 'none'
    // 503: a write whose outcome is unknown
    const unknown = await target()
    failure = 'outcome unknown'
    expect(
      (await send('PUT', path(unknown.id), { token: admin.token, json: { status: 'disabled' } })).status,
    ).toBe(503)
    expect((await send('POST', path(unknown.id, '/revoke'), { token: admin.token })).status).toBe(503)
    expect((await send('POST', path(unknown.id, '/mfa-reset'), { token: admin.token })).status).toBe(503)
    expect((await send('DELETE', path(unknown.id), { token: admin.token })).status).toBe(503)
    failure = 'none'

    // 429: the writes past RATE_LIMIT_PER_MINUTE, and the 403 of an admin without a second factor (its default)
    const limited = await listen({ env: { RATE_LIMIT_PER_MINUTE: '2' } })
    const email = `admin-limited-${randomUUID()}@example.com`
    const registered = await limited.send('POST', '/auth/register', { json: { email, password: PASSWORD } })
    const { id, access_token: token } = registered.body.data
    await limited.service.stores.users.setRole(id, 'tessera-admin', new Date().toISOString())
    expect((await limited.send('GET', '/admin/users', { token })).body.message).toBe('Second factor required')
    for (const [method, url] of every.filter(([method]) => method !== 'GET')) {
      const json = method === 'PUT' ? { status: 'disabled' } : undefined
      const statuses: number[] = []
      for (let i = 0; i < 3; i++) statuses.push((await limited.send(method, url, { json, token })).status)
      expect(statuses, `${method} ${url}`).toEqual([403, 403, 429])
    }
  })

  it('the reverse: every documented answer was exercised above, but those that no request can produce', () => {
    const missed = api.documented().filter((answer) => !api.exercised.has(answer))
    expect(missed.sort()).toEqual(Object.keys(NOT_EXERCISED).sort())
  })
})
