import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Clock } from '../../src/clock.js'
import type { Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { withInjectedFailures } from '../support/failing-stores.js'
import { PASSWORD } from '../support/http.js'
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
}

const backend = backends[0]!
/** Register and refresh allow this many requests a minute: rate limiting on, so its headers are sent. */
const RATE_LIMIT = { RATE_LIMIT_PER_MINUTE: '100' }

interface Listening {
  service: TestService
  /** Sends a request to a path of the document, checks the answer against it, and returns the answer. */
  send(method: string, path: string, init?: Send): Promise<{ status: number; headers: Headers; body: any }>
}

interface Send {
  json?: unknown
  body?: string | Buffer
  contentType?: string
  token?: string
  authorization?: string
}

describe('R4.9.7 the API document is the contract: every answer of a realistic sequence is valid against it', () => {
  let api: ApiDocument
  const services: TestService[] = []

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
      async send(method, path, init = {}) {
        const headers: Record<string, string> = {}
        let body: string | Buffer | undefined = init.body
        if (init.json !== undefined) body = JSON.stringify(init.json)
        if (body !== undefined) headers['content-type'] = init.contentType ?? 'application/json'
        if (init.token) headers.authorization = `Bearer ${init.token}`
        if (init.authorization) headers.authorization = init.authorization
        const response = await fetch(`${base}${path}`, { method, headers, body })
        const text = await response.text()
        api.check({ method, path, status: response.status, headers: response.headers, text })
        return {
          status: response.status,
          headers: response.headers,
          body: text ? JSON.parse(text) : undefined,
        }
      },
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
    const { send } = await listen({
      env: RATE_LIMIT,
      clock,
      wrapStores: (stores: Stores) => {
        const failing = withInjectedFailures(
          withInjectedFailures(stores, () => failure === 'lost'),
          () => failure === 'outcome unknown',
          { writes: ['create', 'start', 'rotate', 'end', 'endAll'], outcomeUnknown: true },
        )
        const database = stores.probes.database!
        const probes = {
          ...stores.probes,
          database: () => (failure === 'probe' ? Promise.reject(new Error('injected')) : database()),
        }
        return { ...failing, probes }
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

    // who am I, and the four 401s of R5.2 on both protected endpoints
    expect((await send('GET', '/auth/me', { token: access })).body.data.email).toBe(email)
    for (const [method, path] of [
      ['GET', '/auth/me'],
      ['POST', '/auth/delete-refresh-token'],
      ['GET', '/auth/sessions'],
      ['DELETE', `/auth/sessions/${'0'.repeat(32)}`],
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
    failure = 'probe'
    expect((await send('GET', '/health')).status).toBe(503)
    failure = 'none'
    clockFails = true
    try {
      expect((await send('GET', '/info')).status).toBe(500)
    } finally {
      clockFails = false
    }

    // and the flow's end once the store is back
    expect((await send('DELETE', `/auth/sessions/${sessions.body.data[0].id}`, { token })).status).toBe(200)
    expect((await send('POST', '/auth/delete-refresh-token', { token })).status).toBe(200)
  })

  it('429: past RATE_LIMIT_PER_MINUTE on register and refresh (R8.1), and on failed logins from one address (R8.4)', async () => {
    const { send } = await listen({ env: { RATE_LIMIT_PER_MINUTE: '2' } })
    const statuses = async (path: string, json: unknown) => {
      const seen: number[] = []
      for (let i = 0; i < 3; i++) seen.push((await send('POST', path, { json })).status)
      return seen
    }
    expect(await statuses('/auth/register', {})).toEqual([400, 400, 429])
    expect(await statuses('/auth/refresh', { refresh_token: 'not.a.token' })).toEqual([401, 401, 429])
    // an e-mail without an account: no address is remembered for it (R8.6)
    const unknown = { email: `nobody-${randomUUID()}@example.com`, password: PASSWORD }
    expect(await statuses('/auth/login', unknown)).toEqual([401, 401, 429])
  })

  it('503: the Argon2 queue full, for register and login (R8.2)', async () => {
    const { send } = await listen({
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
    const together = (path: string, body: (i: number) => unknown) =>
      Promise.all(Array.from({ length: 8 }, (_, i) => send('POST', path, { json: body(i) })))
    const logins = await together('/auth/login', () => ({ email, password: PASSWORD }))
    expect(logins.map((answer) => answer.status)).toContain(503)
    const registrations = await together('/auth/register', (i) => ({
      email: `${i}-${email}`,
      password: PASSWORD,
    }))
    expect(registrations.map((answer) => answer.status)).toContain(503)
  })

  it('403: production behind TRUST_PROXY, a request with credentials that did not come over HTTPS (R5.7.2)', async () => {
    const { send } = await listen({
      env: { ...RATE_LIMIT, NODE_ENV: 'production', TRUST_PROXY: '192.0.2.1' },
    })
    const json = { email: 'a@example.com', password: PASSWORD }
    expect((await send('POST', '/auth/register', { json })).status).toBe(403)
    expect((await send('POST', '/auth/login', { json })).status).toBe(403)
    expect((await send('POST', '/auth/refresh', { json: { refresh_token: 'x' } })).status).toBe(403)
    expect((await send('POST', '/auth/delete-refresh-token', { token: 'x' })).status).toBe(403)
    expect((await send('GET', '/auth/me', { token: 'x' })).status).toBe(403)
    expect((await send('GET', '/auth/sessions', { token: 'x' })).status).toBe(403)
    expect((await send('DELETE', `/auth/sessions/${'0'.repeat(32)}`, { token: 'x' })).status).toBe(403)
  })

  it('R4.13.1 the key sets of EdDSA and ES256, and their discovery documents', async () => {
    for (const algorithm of ['EdDSA', 'ES256']) {
      const { send } = await listen({ env: { AUTH_JWT_ALGORITHM: algorithm } })
      expect((await send('GET', '/.well-known/jwks.json')).body.keys).toHaveLength(1)
      const discovery = await send('GET', '/.well-known/openid-configuration')
      expect(discovery.body.id_token_signing_alg_values_supported).toEqual([algorithm])
    }
  })

  it('the reverse: every documented answer was exercised above, but those that no request can produce', () => {
    const missed = api.documented().filter((answer) => !api.exercised.has(answer))
    expect(missed.sort()).toEqual(Object.keys(NOT_EXERCISED).sort())
  })
})
