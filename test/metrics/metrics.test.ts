import { randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config.js'
import { type Backend, backends } from '../support/backends.js'
import { withInjectedFailures } from '../support/failing-stores.js'
import { call, PASSWORD, uniqueEmail } from '../support/http.js'
import { freePort } from '../support/redis-server.js'
import { startTcpProxy } from '../support/tcp-proxy.js'
import { apiPath, startTestService, type TestService } from '../support/test-service.js'
import { type Sample, sampleValue, scrape } from './prometheus-text.js'

/** The backend labels a backend's stores carry: the SQL engine, and Redis for what REDIS_URL moves there. */
function labelsOf(backend: Backend) {
  const database = backend.name.split('+')[0] as string
  return { database, shared: backend.redis ? 'redis' : database }
}

/** What moved between two scrapes: `after` less `before` (a series absent before counts from 0). */
function moved(before: Sample[], after: Sample[], name: string, labels: Record<string, string> = {}) {
  return (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0)
}

const requests = (route: string, method: string, status: number) => ({
  route: apiPath(route),
  method,
  status: String(status),
})

describe.each(backends)('GET /metrics [$name]', (backend) => {
  let service: TestService
  let metricsUrl: string
  let failing = false
  const labels = labelsOf(backend)

  beforeAll(async () => {
    const port = await freePort()
    metricsUrl = `http://127.0.0.1:${port}/metrics`
    service = await startTestService(backend, {
      // two a minute: the third refresh of the flow is refused with 429
      env: { METRICS_PORT: String(port), RATE_LIMIT_PER_MINUTE: '2' },
      wrapStores: (stores) => withInjectedFailures(stores, () => failing),
    })
  })
  afterAll(async () => {
    await service?.close()
  })

  describe('after a flow: register, 2 logins, a failed login, a refresh, a refused one, a 429 and a 404', () => {
    let before: Sample[]
    let after: Sample[]
    const moves = (name: string, labels: Record<string, string> = {}) => moved(before, after, name, labels)

    beforeAll(async () => {
      before = await scrape(metricsUrl)
      const email = uniqueEmail()
      const post = (path: string, body: unknown) => call(service.app, 'POST', path, { body })
      expect((await post('/auth/register', { email, password: PASSWORD })).status).toBe(200)
      expect((await post('/auth/login', { email, password: PASSWORD })).status).toBe(200)
      const login = await post('/auth/login', { email, password: PASSWORD })
      expect(login.status).toBe(200)
      expect((await post('/auth/login', { email, password: 'wrong password!' })).status).toBe(401)
      const refresh = { refresh_token: login.body.data.refresh_token }
      expect((await post('/auth/refresh', refresh)).status).toBe(200)
      // the same token again: refused, then the third refresh of the minute is over the limit
      expect((await post('/auth/refresh', refresh)).status).toBe(401)
      expect((await post('/auth/refresh', refresh)).status).toBe(429)
      expect((await call(service.app, 'GET', `/no/such/path-${randomUUID()}`)).status).toBe(404)
      after = await scrape(metricsUrl)
    })

    it('R6.2.2 counts each answer once by route pattern, method and status, with its latency; a 404 is route "unmatched"', () => {
      const requestsMoved = (route: string, method: string, status: number) =>
        moves('tessera_http_requests_total', requests(route, method, status))
      expect(requestsMoved('/auth/register', 'POST', 200)).toBe(1)
      expect(requestsMoved('/auth/login', 'POST', 200)).toBe(2)
      expect(requestsMoved('/auth/login', 'POST', 401)).toBe(1)
      expect(requestsMoved('/auth/refresh', 'POST', 200)).toBe(1)
      expect(requestsMoved('/auth/refresh', 'POST', 401)).toBe(1)
      expect(requestsMoved('/auth/refresh', 'POST', 429)).toBe(1)
      expect(moves('tessera_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(
        1,
      )
      // the path asked for is nowhere in the page
      const labelValues = after.flatMap((sample) => Object.values(sample.labels))
      expect(labelValues.some((value) => value.includes('no/such'))).toBe(false)
      const total = (samples: Sample[]) =>
        samples
          .filter((sample) => sample.name === 'tessera_http_requests_total')
          .reduce((sum, sample) => sum + sample.value, 0)
      expect(total(after) - total(before)).toBe(8)

      // the latency histogram counts the same answers, each in one bucket
      const latency = requests('/auth/login', 'POST', 200)
      expect(moves('tessera_http_request_duration_seconds_count', latency)).toBe(2)
      expect(moves('tessera_http_request_duration_seconds_bucket', { ...latency, le: '+Inf' })).toBe(2)
      expect(moves('tessera_http_request_duration_seconds_bucket', { ...latency, le: '10' })).toBe(2)
      expect(moves('tessera_http_request_duration_seconds_sum', latency)).toBeGreaterThan(0)
    })

    it('R6.2.3 counts logins succeeded and failed, refreshes succeeded and refused, and 429s by route', () => {
      expect(moves('tessera_logins_total', { outcome: 'succeeded' })).toBe(2)
      expect(moves('tessera_logins_total', { outcome: 'failed' })).toBe(1)
      expect(moves('tessera_logins_total', { outcome: 'throttled' })).toBe(0)
      // listed at zero, so that an alert has a series to watch
      expect(sampleValue(after, 'tessera_logins_total', { outcome: 'throttled' })).toBe(0)
      expect(moves('tessera_refreshes_total', { outcome: 'succeeded' })).toBe(1)
      expect(moves('tessera_refreshes_total', { outcome: 'refused' })).toBe(1)
      expect(moves('tessera_rate_limited_total', { route: apiPath('/auth/refresh') })).toBe(1)
      expect(
        sampleValue(after, 'tessera_rate_limited_total', { route: apiPath('/auth/login') }),
      ).toBeUndefined()
    })

    it('R6.2.4 times every store call under the backend that holds its store, with no error', () => {
      const storeCalls = (operation: string, backendLabel: string) =>
        moves('tessera_store_call_duration_seconds_count', { backend: backendLabel, operation })
      expect(storeCalls('users.findByEmail', labels.database)).toBeGreaterThanOrEqual(3)
      expect(storeCalls('users.create', labels.database)).toBe(1)
      expect(storeCalls('sessions.rotate', labels.shared)).toBeGreaterThanOrEqual(1)
      const errors = after.filter((sample) => sample.name === 'tessera_store_call_errors_total')
      expect(errors.length).toBeGreaterThan(0)
      expect(errors.every((sample) => sample.value === 0)).toBe(true)
      // every store's series carries its own backend, never another
      const backendsOf = (prefix: string) =>
        new Set(
          errors
            .filter((sample) => sample.labels.operation?.startsWith(prefix))
            .map((sample) => sample.labels.backend),
        )
      expect(backendsOf('users.')).toEqual(new Set([labels.database]))
      expect(backendsOf('sessions.')).toEqual(new Set([labels.shared]))
      // every operation is listed from the start, at zero: one no request calls (tessera users delete does), and
      // the health probe of the database, named as docs/api.md names it
      for (const operation of ['users.delete', 'database.ping']) {
        const series = { backend: labels.database, operation }
        expect(sampleValue(after, 'tessera_store_call_errors_total', series), operation).toBe(0)
      }
      expect(
        sampleValue(after, 'tessera_store_call_duration_seconds_count', {
          backend: labels.database,
          operation: 'users.delete',
        }),
      ).toBe(0)
    })

    it('R6.2.5 counts one Argon2 computation per password checked or hashed, and how long each waited', () => {
      // the registration's hash and the three logins' checks, one after the other: none waited
      expect(moves('tessera_argon2_queue_wait_seconds_count')).toBe(4)
      expect(moves('tessera_argon2_queue_wait_seconds_bucket', { le: '0' })).toBe(4)
      expect(sampleValue(after, 'tessera_argon2_queue_depth')).toBe(0)
      expect(sampleValue(after, 'tessera_argon2_running')).toBe(0)
      expect(sampleValue(after, 'tessera_argon2_refused_total')).toBe(0)
    })

    it("serves the process's memory and event-loop lag (prom-client's default metrics)", () => {
      expect(sampleValue(after, 'process_resident_memory_bytes')).toBeGreaterThan(0)
      expect(sampleValue(after, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0)
    })
  })

  it('R6.2.4 counts the store calls that fail, by backend and operation, while the store fails', async () => {
    const email = uniqueEmail()
    // from an address of its own: the flow above used up the minute's refreshes of the default one
    const post = async (url: string, payload: object) => {
      const response = await service.app.inject({ method: 'POST', url, payload, remoteAddress: '192.0.2.7' })
      return { status: response.statusCode, body: response.json() }
    }
    expect((await post('/auth/register', { email, password: PASSWORD })).status).toBe(200)
    const refresh = {
      refresh_token: (await post('/auth/login', { email, password: PASSWORD })).body.data.refresh_token,
    }
    const before = await scrape(metricsUrl)
    failing = true
    try {
      expect((await post('/auth/login', { email, password: PASSWORD })).status).toBe(500)
      expect((await post('/auth/refresh', refresh)).status).toBe(500)
    } finally {
      failing = false
    }
    const during = await scrape(metricsUrl)
    // the users are in the SQL database; the sessions in Redis when the backend has it
    const errors = (samples: Sample[]) => ({
      users: sampleValue(samples, 'tessera_store_call_errors_total', {
        backend: labels.database,
        operation: 'users.findByEmail',
      }),
      refreshTokens: sampleValue(samples, 'tessera_store_call_errors_total', {
        backend: labels.shared,
        operation: 'sessions.rotate',
      }),
    })
    expect((errors(during).users ?? 0) - (errors(before).users ?? 0)).toBe(1)
    expect((errors(during).refreshTokens ?? 0) - (errors(before).refreshTokens ?? 0)).toBe(1)
    expect(moved(before, during, 'tessera_http_requests_total', requests('/auth/login', 'POST', 500))).toBe(1)
    expect(moved(before, during, 'tessera_http_requests_total', requests('/auth/refresh', 'POST', 500))).toBe(
      1,
    )
    // neither a success nor a failure of the login or the refresh
    expect(moved(before, during, 'tessera_logins_total', { outcome: 'succeeded' })).toBe(0)
    expect(moved(before, during, 'tessera_logins_total', { outcome: 'failed' })).toBe(0)
    expect(moved(before, during, 'tessera_refreshes_total', { outcome: 'succeeded' })).toBe(0)
    expect(moved(before, during, 'tessera_refreshes_total', { outcome: 'refused' })).toBe(0)

    // once it answers again, calls succeed and no error is added
    expect((await post('/auth/login', { email, password: PASSWORD })).status).toBe(200)
    const after = await scrape(metricsUrl)
    expect(errors(after)).toEqual(errors(during))
  })

  it('R6.2.1 serves nothing else on the metrics port, and the public app has no /metrics', async () => {
    const base = metricsUrl.replace(/\/metrics$/, '')
    for (const path of ['/', '/health', '/auth/me', '/metrics/', '/metricsx']) {
      const response = await fetch(`${base}${path}`)
      expect(response.status, path).toBe(404)
      expect(await response.text()).toBe('Not Found: metrics are served at /metrics\n')
    }
    const post = await fetch(metricsUrl, { method: 'POST', body: '{}' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD')
    const query = await fetch(`${metricsUrl}?name[]=tessera_logins_total`)
    expect(query.status).toBe(200)
    const head = await fetch(metricsUrl, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(await head.text()).toBe('')

    const publicMetrics = await call(service.app, 'GET', '/metrics')
    expect(publicMetrics.status).toBe(404)
    expect(publicMetrics.body).toMatchObject({ code: 404, data: null })
  })
})

describe('METRICS_PORT', () => {
  const [sqlite] = backends
  if (sqlite === undefined) throw new Error('no SQLite backend')

  it('R6.2.1 unset: nothing is counted and no metrics port is opened', async () => {
    const service = await startTestService(sqlite)
    try {
      expect(service.config.server.metrics).toBeNull()
      expect((await call(service.app, 'GET', '/metrics')).status).toBe(404)
    } finally {
      await service.close()
    }
  })

  it('R6.2.1 a port already taken stops the start with one line naming METRICS_PORT', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()))
    const { port } = blocker.address() as { port: number }
    const instance = await sqlite.setup()
    try {
      const error = await startTestService(sqlite, { instance, env: { METRICS_PORT: String(port) } }).then(
        () => null,
        (failure: unknown) => failure,
      )
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).variable).toBe('METRICS_PORT')
      expect((error as Error).message).toMatch(
        /^METRICS_PORT cannot be listened on at 127\.0\.0\.1: .*EADDRINUSE/,
      )
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
      await instance.teardown()
    }
  })
})

/** The SQL backends served by a real server, which a TCP proxy can take away. */
const serverDatabases = backends.filter((backend) => backend.name === 'postgres' || backend.name === 'mysql')

describe.each(serverDatabases)('store errors while the database [$name] is down', (backend) => {
  it('R6.2.4 counts each failed call under its backend, and stops counting once it is back', async () => {
    const instance = await backend.setup()
    const url = new URL(instance.env.DATABASE_URL as string)
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) })
    url.port = String(proxy.port)
    const port = await freePort()
    const metricsUrl = `http://127.0.0.1:${port}/metrics`
    const service = await startTestService(backend, {
      instance,
      env: { DATABASE_URL: url.toString(), STORAGE_TIMEOUT_MS: '1000', METRICS_PORT: String(port) },
    })
    try {
      const email = uniqueEmail()
      expect(
        (await call(service.app, 'POST', '/auth/register', { body: { email, password: PASSWORD } })).status,
      ).toBe(200)
      const errors = (samples: Sample[]) =>
        sampleValue(samples, 'tessera_store_call_errors_total', {
          backend: backend.name,
          operation: 'users.findByEmail',
        })
      const before = await scrape(metricsUrl)
      expect(errors(before)).toBe(0)
      await proxy.mode('refuse')
      for (let i = 0; i < 3; i++) {
        expect(
          (await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })).status,
        ).toBe(500)
      }
      const during = await scrape(metricsUrl)
      expect(errors(during)).toBe(3)
      expect(
        moved(before, during, 'tessera_store_call_duration_seconds_count', {
          backend: backend.name,
          operation: 'users.findByEmail',
        }),
      ).toBe(3)
      await proxy.mode('forward')
      let status = 0
      for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
        status = (await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } }))
          .status
      }
      expect(status).toBe(200)
      const after = await scrape(metricsUrl)
      expect(errors(after)).toBe(
        errors(during)! +
          moved(during, after, 'tessera_http_requests_total', requests('/auth/login', 'POST', 500)),
      )
    } finally {
      await service.close()
      await proxy.close()
      await instance.teardown()
    }
  })
})
