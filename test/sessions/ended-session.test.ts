import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type UserAdmin, userAdminOn } from '../../src/auth/user-admin.js'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores } from '../../src/storage/stores.js'
import { type Backend, type BackendInstance, backends } from '../support/backends.js'
import { call, PASSWORD, uniqueEmail } from '../support/http.js'
import { codeIn, emlMailbox, type Mailbox } from '../support/mailbox.js'
import { type RunningService, startProcess } from '../support/process.js'
import { startTestService, TEST_ENV, type TestService } from '../support/test-service.js'

/**
 * docs/api.md R5.3.1 "An ended session changes nothing": for every way a session ends, in both session modes and on
 * every backend (and across two service processes on PostgreSQL), the access token of the ended session is refused
 * by every endpoint that changes the account or its sessions, while it still reads (R3.8).
 */

type Mode = 'single' | 'per-device'

interface Answer {
  status: number
  body: any
  headers: Record<string, unknown>
}

interface Request {
  token?: string
  body?: unknown
  query?: Record<string, string>
  /** A body sent as is, with its own Content-Type (the avatar's form). */
  raw?: { payload: Buffer; contentType: string }
}

/** One service's HTTP face, whether injected in process or called over the network. */
type Api = (method: string, path: string, request?: Request) => Promise<Answer>

const injected =
  (service: TestService): Api =>
  async (method, path, request = {}) => {
    const headers: Record<string, string> = {}
    if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`
    if (request.raw !== undefined) {
      const response = await service.app.inject({
        method: method as 'POST',
        url: path,
        headers: { ...headers, 'content-type': request.raw.contentType },
        payload: request.raw.payload,
      })
      return { status: response.statusCode, body: response.json(), headers: response.headers }
    }
    const reply = await call(service.app, method, path, {
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      ...(request.query === undefined ? {} : { query: request.query }),
    })
    return { status: reply.status, body: reply.body, headers: reply.headers }
  }

const overHttp =
  (service: RunningService): Api =>
  async (method, path, request = {}) => {
    const headers: Record<string, string> = {}
    if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`
    let body: Uint8Array | string | undefined
    if (request.raw !== undefined) {
      headers['content-type'] = request.raw.contentType
      body = new Uint8Array(request.raw.payload)
    } else if (request.body !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(request.body)
    }
    const query = request.query === undefined ? '' : `?${new URLSearchParams(request.query)}`
    const response = await fetch(`${service.url}${path}${query}`, { method, headers, body })
    return {
      status: response.status,
      body: await response.json(),
      headers: Object.fromEntries(response.headers),
    }
  }

/** Where a scenario runs: the service it ends a session on, the one it tries the token on, and their helpers. */
interface World {
  mode: Mode
  /** The service a session is ended through. */
  api: Api
  /** The service the ended session's token is tried on: the same one, or another instance sharing the store. */
  other: Api
  mailbox: Mailbox
  operator: UserAdmin
}

interface Account {
  email: string
  id: string
  accessToken: string
  refreshToken: string
}

const ok = (answer: Answer) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body.data
}

const register = async (api: Api, email = uniqueEmail()): Promise<Account> => {
  const data = ok(await api('POST', '/auth/register', { body: { email, password: PASSWORD } }))
  const me = ok(await api('GET', '/auth/me', { token: data.access_token }))
  return { email, id: me.id, accessToken: data.access_token, refreshToken: data.refresh_token }
}

const login = async (api: Api, email: string): Promise<Account> => {
  const data = ok(await api('POST', '/auth/login', { body: { email, password: PASSWORD } }))
  return { email, id: data.id, accessToken: data.access_token, refreshToken: data.refresh_token }
}

/** A code mailed for `purpose` to `email`, through the public endpoint. */
const mailedCode = async (world: World, email: string, purpose: string): Promise<string> => {
  ok(await world.api('POST', '/auth/email/send-code', { body: { email, purpose } }))
  const code = codeIn(await world.mailbox.next(email, 20_000))
  if (code === null) throw new Error(`no code in the ${purpose} mail to ${email}`)
  return code
}

const sessionIdOf = async (api: Api, token: string): Promise<string> => {
  const sessions = ok(await api('GET', '/auth/sessions', { token })) as Array<{
    id: string
    current: boolean
  }>
  const mine = sessions.find((session) => session.current) ?? sessions[0]
  if (mine === undefined) throw new Error('no session listed')
  return mine.id
}

/** A way a session ends. `end` ends the session of `victim` (a fresh account's) and says what is left of it. */
interface Ending {
  name: string
  modes: readonly Mode[]
  /** Needs AUTH_REFRESH_REUSE_ENDS_SESSION=true (run on the services that have it). */
  reuse?: boolean
  /** Resolves with the access token of the ended session, and whether the account is gone. */
  end(world: World, victim: Account): Promise<{ stale: string; accountGone?: boolean }>
}

const ENDINGS: readonly Ending[] = [
  {
    name: 'logout',
    modes: ['single', 'per-device'],
    async end({ api }, victim) {
      ok(await api('POST', '/auth/delete-refresh-token', { token: victim.accessToken }))
      return { stale: victim.accessToken }
    },
  },
  {
    name: 'logout with scope=others from another session',
    modes: ['per-device'],
    async end({ api }, victim) {
      const other = await login(api, victim.email)
      ok(
        await api('POST', '/auth/delete-refresh-token', {
          token: other.accessToken,
          query: { scope: 'others' },
        }),
      )
      return { stale: victim.accessToken }
    },
  },
  {
    name: 'logout with scope=all',
    modes: ['single', 'per-device'],
    async end({ api }, victim) {
      ok(
        await api('POST', '/auth/delete-refresh-token', {
          token: victim.accessToken,
          query: { scope: 'all' },
        }),
      )
      return { stale: victim.accessToken }
    },
  },
  {
    name: 'DELETE /auth/sessions/{id}',
    modes: ['single', 'per-device'],
    async end({ api, mode }, victim) {
      const id = await sessionIdOf(api, victim.accessToken)
      // per device, another session of the user ends it; in single mode there is no other, and it ends itself
      const by = mode === 'per-device' ? (await login(api, victim.email)).accessToken : victim.accessToken
      ok(await api('DELETE', `/auth/sessions/${id}`, { token: by }))
      return { stale: victim.accessToken }
    },
  },
  {
    name: 'a password reset',
    modes: ['single', 'per-device'],
    async end(world, victim) {
      const code = await mailedCode(world, victim.email, 'reset_password')
      const body = { email: victim.email, verification_code: code, new_password: PASSWORD }
      ok(await world.api('POST', '/auth/password/reset', { body }))
      return { stale: victim.accessToken }
    },
  },
  {
    name: "the claim of an impostor's address (R4.15.1)",
    modes: ['single', 'per-device'],
    async end(world, impostor) {
      // the victim registered without a code: whoever proves the address by a sign-in code ends its sessions
      const code = await mailedCode(world, impostor.email, 'login')
      const body = { email: impostor.email, verification_code: code }
      ok(await world.api('POST', '/auth/login/email-code', { body }))
      return { stale: impostor.accessToken }
    },
  },
  {
    name: 'a password change',
    modes: ['single', 'per-device'],
    async end({ api, mode }, victim) {
      // per device, from another session (the victim's ends); in single mode from the session itself, whose answer
      // starts the one session the client goes on with
      const by = mode === 'per-device' ? (await login(api, victim.email)).accessToken : victim.accessToken
      const body = { current_password: PASSWORD, new_password: `${PASSWORD}!` }
      ok(await api('POST', '/auth/password/change', { token: by, body }))
      return { stale: victim.accessToken }
    },
  },
  {
    name: 'the deletion of the account',
    modes: ['single', 'per-device'],
    async end({ api, mode }, victim) {
      const by = mode === 'per-device' ? (await login(api, victim.email)).accessToken : victim.accessToken
      ok(await api('POST', '/auth/delete', { token: by, body: { password: PASSWORD } }))
      return { stale: victim.accessToken, accountGone: true }
    },
  },
  {
    name: "an operator's disable",
    modes: ['single', 'per-device'],
    async end({ operator }, victim) {
      await operator.disable(await operator.find({ id: victim.id }))
      return { stale: victim.accessToken }
    },
  },
  {
    name: "an operator's revoke",
    modes: ['single', 'per-device'],
    async end({ operator }, victim) {
      await operator.revoke(await operator.find({ id: victim.id }))
      return { stale: victim.accessToken }
    },
  },
  {
    name: "an operator's set-role",
    modes: ['single', 'per-device'],
    async end({ operator }, victim) {
      await operator.setRole(await operator.find({ id: victim.id }), 'editor')
      return { stale: victim.accessToken }
    },
  },
  {
    name: 'a newer login (single mode replaces the session)',
    modes: ['single'],
    async end({ api }, victim) {
      await login(api, victim.email)
      return { stale: victim.accessToken }
    },
  },
  {
    name: 'eviction past AUTH_MAX_SESSIONS',
    modes: ['per-device'],
    async end({ api }, victim) {
      // AUTH_MAX_SESSIONS=2 (below): two newer logins leave the victim's session the least recently used, ended
      await login(api, victim.email)
      await login(api, victim.email)
      return { stale: victim.accessToken }
    },
  },
  {
    name: 'reuse detection',
    modes: ['single', 'per-device'],
    reuse: true,
    async end({ api }, victim) {
      // the session goes on with the rotated pair; then its first refresh token is presented again: the session ends
      const rotated = ok(await api('POST', '/auth/refresh', { body: { refresh_token: victim.refreshToken } }))
      const reused = await api('POST', '/auth/refresh', { body: { refresh_token: victim.refreshToken } })
      expect(reused.status).toBe(401)
      return { stale: rotated.access_token }
    },
  },
]

/** The refusal of R5.3.1: the 401 of an expired token, with its challenge. */
const expectRefused = (answer: Answer, what: string) => {
  expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).toBe(401)
  expect(answer.body).toEqual({ code: 401, message: 'Access token is invalid or expired', data: null })
  expect(answer.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
}

/** A form with one file that is no image: the avatar endpoint answers it 415 once it reads it. */
const notAnImage = () => {
  const boundary = `----tessera${randomBytes(8).toString('hex')}`
  const payload = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="avatar"; filename="me.png"\r\n` +
      `Content-Type: image/png\r\n\r\nnot an image\r\n--${boundary}--\r\n`,
  )
  return { payload, contentType: `multipart/form-data; boundary=${boundary}` }
}

/** Every endpoint of R5.3.1, with a request that would change something for a live session. */
const CHANGING: ReadonlyArray<{ method: string; path: string; request: Omit<Request, 'token'> }> = [
  {
    method: 'POST',
    path: '/auth/me/send-code',
    request: { body: { purpose: 'change_email', new_email: uniqueEmail() } },
  },
  {
    method: 'POST',
    path: '/auth/password/change',
    request: { body: { current_password: PASSWORD, new_password: `${PASSWORD}?` } },
  },
  {
    method: 'POST',
    path: '/auth/email/change',
    request: { body: { new_email: uniqueEmail(), verification_code: '123456' } },
  },
  { method: 'POST', path: '/auth/email/verify', request: { body: { verification_code: '123456' } } },
  { method: 'POST', path: '/auth/delete', request: { body: { password: PASSWORD } } },
  { method: 'PUT', path: '/auth/profile', request: { body: { nickname: 'Mallory' } } },
  { method: 'POST', path: '/auth/avatar', request: { raw: notAnImage() } },
  { method: 'DELETE', path: '/auth/avatar', request: {} },
  { method: 'DELETE', path: '/auth/oauth/github', request: {} },
  { method: 'DELETE', path: `/auth/sessions/${'0'.repeat(32)}`, request: {} },
  { method: 'POST', path: '/auth/delete-refresh-token', request: { query: { scope: 'others' } } },
  { method: 'POST', path: '/auth/delete-refresh-token', request: { query: { scope: 'all' } } },
]

/**
 * The scenario of one ending: a session that changes its profile (so the check lets a live one through), is ended,
 * and then changes nothing, on the other service too, while its token still reads.
 */
async function endingRefusesChanges(world: World, ending: Ending): Promise<void> {
  const victim = await register(world.api)
  const before = await world.other('PUT', '/auth/profile', {
    token: victim.accessToken,
    body: { nickname: 'Alice' },
  })
  expect(before.status, JSON.stringify(before.body)).toBe(200)
  const { stale, accountGone = false } = await ending.end(world, victim)

  expectRefused(
    await world.other('PUT', '/auth/profile', { token: stale, body: { nickname: 'Mallory' } }),
    `${ending.name}: PUT /auth/profile`,
  )
  expectRefused(
    await world.other('POST', '/auth/me/send-code', {
      token: stale,
      body: { purpose: 'change_email', new_email: uniqueEmail() },
    }),
    `${ending.name}: POST /auth/me/send-code`,
  )
  expectRefused(
    await world.other('POST', '/auth/delete-refresh-token', { token: stale, query: { scope: 'all' } }),
    `${ending.name}: logout with scope=all`,
  )
  // the token still reads (R3.8), but after a deletion (R4.7.2, R4.11.2)
  const me = await world.other('GET', '/auth/me', { token: stale })
  const sessions = await world.other('GET', '/auth/sessions', { token: stale })
  if (accountGone) {
    expectRefused(me, 'GET /auth/me of a deleted account')
    expectRefused(sessions, 'GET /auth/sessions of a deleted account')
    return
  }
  // nothing changed: the nickname is the one the live session set
  expect(ok(me).nickname).toBe('Alice')
  expect(sessions.status).toBe(200)
}

/** Every endpoint of R5.3.1 refuses the token of a session ended by a logout, and takes a live one. */
async function everyEndpointRefuses(world: World): Promise<void> {
  const victim = await register(world.api)
  ok(await world.api('POST', '/auth/delete-refresh-token', { token: victim.accessToken }))
  for (const { method, path, request } of CHANGING) {
    expectRefused(
      await world.other(method, path, { ...request, token: victim.accessToken }),
      `${method} ${path}`,
    )
  }
  // a live session of the same account passes the check on each (its answers are the endpoints' own: never 401)
  let live = (await login(world.api, victim.email)).accessToken
  for (const { method, path, request } of CHANGING.filter(({ path }) => path !== '/auth/delete')) {
    const answer = await world.other(method, path, { ...request, token: live })
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).not.toBe(401)
    // a password change ends the caller's session too and answers the one it goes on with (R4.18.1)
    live = answer.body.data?.access_token ?? live
  }
}

/** Variables of every service of this file: a provider to unlink, AUTH_MAX_SESSIONS of the eviction. */
const SHARED_ENV = {
  OAUTH_PROVIDERS: 'github',
  OAUTH_GITHUB_CLIENT_ID: 'tessera-test',
  OAUTH_GITHUB_CLIENT_SECRET: 'tessera-test-secret',
  AUTH_MAX_SESSIONS: '2',
}
const modeEnv = (mode: Mode, reuse: boolean): Record<string, string> => ({
  ...SHARED_ENV,
  AUTH_SESSIONS: mode,
  ...(reuse ? { AUTH_REFRESH_REUSE_ENDS_SESSION: 'true' } : {}),
})
const MODES: readonly Mode[] = ['single', 'per-device']
/**
 * The configurations the scenarios run on: single mode with and without reuse detection, and per device with it (per
 * device, tokens name their session by sid whether or not reuse detection is on, so one serves every ending).
 */
const CONFIGURATIONS: ReadonlyArray<readonly [Mode, boolean]> = [
  ['single', false],
  ['single', true],
  ['per-device', true],
]
const configuration = (mode: Mode, reuse: boolean) => `${mode}/${reuse || mode === 'per-device'}`

describe.each(backends)('R5.3.1 an ended session changes nothing [$name]', (backend: Backend) => {
  let instance: BackendInstance
  const services = new Map<string, TestService>()
  let mailbox: Mailbox
  beforeAll(async () => {
    instance = await backend.setup()
    // one store, and a service of each configuration on it
    for (const [mode, reuse] of CONFIGURATIONS) {
      const service = await startTestService(backend, { instance, env: modeEnv(mode, reuse) })
      services.set(configuration(mode, reuse), service)
    }
    mailbox = emlMailbox(instance.env.DATA_DIR as string)
  })
  afterAll(async () => {
    await mailbox?.close()
    for (const service of services.values()) await service.close()
    await instance?.teardown()
  })
  const worldOf = (mode: Mode, reuse: boolean): World => {
    const service = services.get(configuration(mode, reuse)) as TestService
    const api = injected(service)
    return {
      mode,
      api,
      other: api,
      mailbox,
      operator: userAdminOn(service.stores, service.config, systemClock),
    }
  }

  for (const mode of MODES) {
    for (const ending of ENDINGS.filter((candidate) => candidate.modes.includes(mode))) {
      it(`${mode}: after ${ending.name}`, () =>
        endingRefusesChanges(worldOf(mode, ending.reuse ?? false), ending))
    }
    it(`${mode}: every endpoint that changes the account or its sessions`, () =>
      everyEndpointRefuses(worldOf(mode, false)))
  }
})

describe.each(backends.filter((backend) => backend.name.startsWith('postgres')))(
  'R5.3.1 an ended session changes nothing on the other instance [$name]',
  (backend: Backend) => {
    let instance: BackendInstance
    let stores: Stores
    let operator: UserAdmin
    let mailbox: Mailbox
    const pairs = new Map<string, [RunningService, RunningService]>()
    beforeAll(async () => {
      instance = await backend.setup()
      // a pair at a time (each pair's two at once, as a rolling deploy has them): eight processes starting together
      // on a busy 2-core machine can take longer than a start-up deadline
      for (const [mode, reuse] of CONFIGURATIONS) {
        const env = { ...instance.env, ...modeEnv(mode, reuse) }
        pairs.set(configuration(mode, reuse), await Promise.all([startProcess(env), startProcess(env)]))
      }
      const config = loadConfig({ ...TEST_ENV, ...instance.env })
      stores = await openStores(config.storage, systemClock)
      operator = userAdminOn(stores, config, systemClock)
      mailbox = emlMailbox(instance.env.DATA_DIR as string)
    }, 240_000)
    afterAll(async () => {
      await mailbox?.close()
      await Promise.all([...pairs.values()].flat().map((service) => service.stop()))
      await stores?.close()
      await instance?.teardown()
    })
    const worldOf = (mode: Mode, reuse: boolean): World => {
      const [first, second] = pairs.get(configuration(mode, reuse)) as [RunningService, RunningService]
      return { mode, api: overHttp(first), other: overHttp(second), mailbox, operator }
    }

    for (const mode of MODES) {
      for (const ending of ENDINGS.filter((candidate) => candidate.modes.includes(mode))) {
        it(`${mode}: after ${ending.name} on the first, the second refuses`, () =>
          endingRefusesChanges(worldOf(mode, ending.reuse ?? false), ending))
      }
      it(`${mode}: every endpoint that changes the account or its sessions, on the second`, () =>
        everyEndpointRefuses(worldOf(mode, false)))
    }
  },
)
