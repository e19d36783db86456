import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { StorageError } from '../../src/errors.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { openStores } from '../../src/storage/open-stores.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { bearer, call, PASSWORD, uniqueEmail } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'

/** Events reach the store within the sink's interval, or its retry (a second) after a failure. */
const WAIT = { timeout: 10_000 }

/** docs/api.md "Audit events": the events of a flow over HTTP, in the audit_events table of every backend. */
describe.each(backends)('audit events over HTTP [$name]', (backend) => {
  let service: TestService
  /** Every batch the sink appended, in order (the store's append observed, not replaced). */
  const appended: SecurityEvent[] = []
  beforeAll(async () => {
    service = await startTestService(backend, {
      // one free failure per account, so that the throttle refuses the second one from an unknown address
      env: { AUTH_LOGIN_BACKOFF_AFTER: '1' },
      wrapStores: (stores) => ({
        ...stores,
        audit: {
          ...stores.audit,
          append: async (events) => {
            await stores.audit.append(events)
            appended.push(...events)
          },
        },
      }),
    })
  })
  afterAll(() => service?.close())

  /** One request from `address`, and the request id its request log line names. */
  const request = async (
    method: 'GET' | 'POST',
    url: string,
    options: { body?: unknown; headers?: Record<string, string>; address?: string } = {},
  ) => {
    const before = service.logs().filter((record) => record.msg === 'request').length
    const response = await service.app.inject({
      method,
      url,
      remoteAddress: options.address ?? '127.0.0.1',
      headers: {
        ...options.headers,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(options.body === undefined ? {} : { payload: JSON.stringify(options.body) }),
    })
    const line = await vi.waitFor(() => {
      const lines = service.logs().filter((record) => record.msg === 'request')
      expect(lines.length).toBe(before + 1)
      return lines[before]
    }, WAIT)
    return { status: response.statusCode, body: response.json(), reqId: String(line?.reqId) }
  }

  it('R6.3.1 each event of a flow, with its user id, client address, request id and reason, and no secret', async () => {
    const email = uniqueEmail()
    const registered = await request('POST', '/auth/register', { body: { email, password: PASSWORD } })
    expect(registered.status).toBe(200)
    const wrong = await request('POST', '/auth/login', {
      body: { email, password: 'wrong password 1' },
      address: '198.51.100.7',
    })
    expect(wrong.status).toBe(401)
    const unknownEmail = uniqueEmail()
    const unknown = await request('POST', '/auth/login', {
      body: { email: unknownEmail, password: PASSWORD },
    })
    expect(unknown.status).toBe(401)
    const throttled = await request('POST', '/auth/login', {
      body: { email, password: 'wrong password 2' },
      address: '198.51.100.7',
    })
    expect(throttled.status).toBe(429)
    const login = await request('POST', '/auth/login', { body: { email, password: PASSWORD } })
    expect(login.status).toBe(200)
    const id: string = login.body.data.id
    const { access_token: accessToken, refresh_token: refreshToken } = login.body.data
    const refreshed = await request('POST', '/auth/refresh', { body: { refresh_token: refreshToken } })
    expect(refreshed.status).toBe(200)
    const reused = await request('POST', '/auth/refresh', { body: { refresh_token: refreshToken } })
    expect(reused.status).toBe(401)
    const invalid = await request('POST', '/auth/refresh', { body: { refresh_token: 'not.a.token' } })
    expect(invalid.status).toBe(401)
    const logout = await request('POST', '/auth/delete-refresh-token', {
      headers: bearer(refreshed.body.data.access_token),
    })
    expect(logout.status).toBe(200)
    // GET /auth/me is no security event
    expect((await request('GET', '/auth/me', { headers: bearer(accessToken) })).status).toBe(200)

    const expected = [
      ['registered', id, '127.0.0.1', registered.reqId, null],
      ['login_failed', id, '198.51.100.7', wrong.reqId, 'wrong_password'],
      ['login_failed', null, '127.0.0.1', unknown.reqId, 'unknown_email'],
      ['login_failed', null, '198.51.100.7', throttled.reqId, 'throttled'],
      ['login_succeeded', id, '127.0.0.1', login.reqId, null],
      ['refresh_succeeded', id, '127.0.0.1', refreshed.reqId, null],
      ['refresh_refused', id, '127.0.0.1', reused.reqId, 'reused'],
      ['refresh_refused', null, '127.0.0.1', invalid.reqId, 'invalid'],
      ['logout', id, '127.0.0.1', logout.reqId, null],
    ]
    const row = (e: SecurityEvent) => [e.type, e.userId, e.clientAddress, e.requestId, e.reason]
    const mine = (e: SecurityEvent) => e.userId === id || expected.some((x) => x[3] === e.requestId)
    await vi.waitFor(() => expect(appended.filter(mine).map(row)).toEqual(expected), WAIT)
    // in the table: the user's events, oldest first
    expect((await service.stores.audit.list({ userId: id })).map(row)).toEqual(
      expected.filter(([, userId]) => userId === id),
    )
    const stored = JSON.stringify(await service.stores.audit.list({ userId: id }))
    for (const secret of [PASSWORD, 'wrong password', email, unknownEmail, accessToken, refreshToken]) {
      expect(stored).not.toContain(secret)
      expect(JSON.stringify(appended)).not.toContain(secret)
    }

    // the log: each event once, under its request's id (login_failed at warn, the others at info)
    const logged = service.logs().filter((record) => record.event !== undefined)
    for (const [type, userId, , reqId, reason] of expected) {
      const lines = logged.filter((record) => record.reqId === reqId && record.event === type)
      if (reason === 'throttled') {
        // refused before any check: not logged, as before (a guessing flood must not flood the log)
        expect(lines).toEqual([])
        continue
      }
      expect(lines, `${type} ${reqId}`).toHaveLength(1)
      expect(lines[0]).toMatchObject({ level: type === 'login_failed' ? 40 : 30 })
      if (userId !== null) expect(lines[0]?.userId).toBe(userId)
    }
  })
})

describe('audit events while the audit store fails', () => {
  const sqlite = backends.find((backend) => backend.name === 'sqlite')
  if (sqlite === undefined) throw new Error('the sqlite backend is always available')
  let service: TestService
  let failing = true
  beforeAll(async () => {
    service = await startTestService(sqlite, {
      wrapStores: (stores) => ({
        ...stores,
        audit: {
          ...stores.audit,
          append: (events) =>
            failing
              ? Promise.reject(
                  new StorageError('audit.append failed', { cause: new Error('disk I/O error') }),
                )
              : stores.audit.append(events),
        },
      }),
    })
  })
  afterAll(() => service?.close())

  it('R6.3.3 the service keeps serving: logins are not refused, and the events are written once the store answers', async () => {
    const email = uniqueEmail()
    expect(
      (await call(service.app, 'POST', '/auth/register', { body: { email, password: PASSWORD } })).status,
    ).toBe(200)
    const logins = []
    for (let i = 0; i < 5; i++) {
      logins.push(await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } }))
    }
    expect(logins.map((login) => login.status)).toEqual([200, 200, 200, 200, 200])
    const id: string = logins[0]?.body.data.id
    await vi.waitFor(
      () =>
        expect(
          service.logs().filter((record) => record.msg?.toString().startsWith('audit events could not')),
        ).toHaveLength(1),
      WAIT,
    )
    expect(await service.stores.audit.list({ userId: id })).toEqual([])
    failing = false
    // the log line follows the commit, which the reads may see first
    await vi.waitFor(async () => {
      const events = await service.stores.audit.list({ userId: id })
      expect(events.map((event) => event.type)).toEqual(['registered', ...Array(5).fill('login_succeeded')])
      expect(service.logs().map((record) => record.msg)).toContain(
        'the audit store answers again: the pending audit events are written',
      )
    }, WAIT)
  })
})

describe('AUDIT_RETENTION_DAYS', () => {
  const sqlite = backends.find((backend) => backend.name === 'sqlite')
  if (sqlite === undefined) throw new Error('the sqlite backend is always available')
  let instance: BackendInstance
  beforeAll(async () => {
    instance = await sqlite.setup()
  })
  afterAll(() => instance?.teardown())

  it('R6.3.5 the service prunes the events older than the retention at start; 0 keeps no trail', async () => {
    const userId = '1234567890'
    const day = 86_400_000
    const stores = await openStores(loadConfig(instance.env).storage, systemClock)
    const old = { userId, clientAddress: null, requestId: null, reason: null } as const
    await stores.audit.append([
      { ...old, at: Date.now() - 8 * day, type: 'login_succeeded' },
      { ...old, at: Date.now() - 6 * day, type: 'logout' },
    ])
    await stores.close()
    const service = await startTestService(sqlite, { instance, env: { AUDIT_RETENTION_DAYS: '7' } })
    try {
      // the log line follows the commit, which the reads may see first
      await vi.waitFor(
        () =>
          expect(service.logs()).toContainEqual(
            expect.objectContaining({ msg: 'old audit events pruned', deleted: 1 }),
          ),
        WAIT,
      )
      expect((await service.stores.audit.list({ userId })).map((event) => event.type)).toEqual(['logout'])
    } finally {
      await service.close()
    }

    const off = await startTestService(sqlite, { instance, env: { AUDIT_RETENTION_DAYS: '0' } })
    const email = uniqueEmail()
    let id: string
    try {
      expect(
        (await call(off.app, 'POST', '/auth/register', { body: { email, password: PASSWORD } })).status,
      ).toBe(200)
      const login = await call(off.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
      id = login.body.data.id
      // logged, not kept
      expect(off.logs()).toContainEqual(expect.objectContaining({ event: 'login_succeeded', userId: id }))
    } finally {
      // close writes whatever the sink holds: nothing
      await off.close()
    }
    const reopened = await openStores(loadConfig(instance.env).storage, systemClock)
    try {
      expect(await reopened.audit.list({ userId: id })).toEqual([])
    } finally {
      await reopened.close()
    }
  })
})
