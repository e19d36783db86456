import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { backends } from './support/backends.js'
import { fetchJson as json } from './support/fetch-json.js'
import { runCli, startProcess } from './support/process.js'
import { eventually } from './support/redis-server.js'
import { startTestService, TEST_SECRET } from './support/test-service.js'

const PASSWORD = 'correct horse battery'

describe('tessera serve (a real process)', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-process-'))
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('starts on the embedded store with a persisted development secret and logs one line', async () => {
    const dataDir = join(dir, 'data')
    const service = await startProcess({ DATA_DIR: dataDir, AUTH_JWT_SECRET: undefined, NODE_ENV: undefined })
    try {
      expect(service.stdout).toHaveLength(1)
      const line = JSON.parse(service.stdout[0] ?? '{}')
      expect(line.msg).toBe(`tessera listening on ${service.url} (store: sqlite ${dataDir}/app.db)`)
      expect((await stat(join(dataDir, 'app.db'))).isFile()).toBe(true)
      const secretFile = await stat(join(dataDir, 'jwt-secret'))
      expect(secretFile.mode & 0o777).toBe(0o600)
      expect((await readFile(join(dataDir, 'jwt-secret'), 'utf8')).trim().length).toBeGreaterThanOrEqual(32)
    } finally {
      expect(await service.stop()).toBe(0)
    }
  })

  it("serves the API reference page and Swagger UI's own files, which the built command finds in its package", async () => {
    const service = await startProcess({ DATA_DIR: join(dir, 'data'), NODE_ENV: 'development' })
    try {
      const page = await fetch(`${service.url}/docs/`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('swagger-initializer.js')
      const style = await fetch(`${service.url}/docs/static/swagger-ui.css`)
      expect(style.status).toBe(200)
      expect(await style.text()).toContain('.swagger-ui')
      const logo = await fetch(`${service.url}/docs/static/logo.svg`)
      expect(logo.status).toBe(200)
      expect(await logo.text()).toContain('<svg')
    } finally {
      expect(await service.stop()).toBe(0)
    }
  })

  it('walks through the README flow, and tokens survive a restart', async () => {
    const env = { DATA_DIR: dir, AUTH_JWT_SECRET: undefined, NODE_ENV: undefined }
    const service = await startProcess(env)
    const email = 'ada@example.com'
    let accessToken: string
    let refreshToken: string
    try {
      const base = service.url
      expect(
        (await json(`${base}/auth/register`, { method: 'POST', body: { email, password: PASSWORD } })).status,
      ).toBe(200)
      const login = await json(`${base}/auth/login`, { method: 'POST', body: { email, password: PASSWORD } })
      expect(login.status).toBe(200)
      const me = await json(`${base}/auth/me`, { token: login.body.data.access_token })
      expect(me.body.data.email).toBe(email)
      const refreshed = await json(`${base}/auth/refresh`, {
        method: 'POST',
        body: { refresh_token: login.body.data.refresh_token },
      })
      expect(refreshed.status).toBe(200)
      const reuse = await json(`${base}/auth/refresh`, {
        method: 'POST',
        body: { refresh_token: login.body.data.refresh_token },
      })
      expect(reuse.status).toBe(401)
      accessToken = refreshed.body.data.access_token
      refreshToken = refreshed.body.data.refresh_token
    } finally {
      expect(await service.stop()).toBe(0)
    }
    const restarted = await startProcess(env)
    try {
      expect((await json(`${restarted.url}/auth/me`, { token: accessToken })).status).toBe(200)
      const logout = await json(`${restarted.url}/auth/delete-refresh-token`, {
        method: 'POST',
        token: accessToken,
      })
      expect(logout.body).toEqual({ code: 200, message: 'Success', data: null })
      const afterLogout = await json(`${restarted.url}/auth/refresh`, {
        method: 'POST',
        body: { refresh_token: refreshToken },
      })
      expect(afterLogout.status).toBe(401)
    } finally {
      expect(await restarted.stop()).toBe(0)
    }
  })

  it('never logs passwords, tokens, the Authorization header or the secret', async () => {
    const secret = 'log-test-secret-log-test-secret-0123'
    const service = await startProcess({ DATA_DIR: dir, AUTH_JWT_SECRET: secret, LOG_LEVEL: 'trace' })
    const seen: string[] = [PASSWORD, 'wrong password here', secret]
    try {
      const base = service.url
      const email = 'grep@example.com'
      await json(`${base}/auth/register`, { method: 'POST', body: { email, password: PASSWORD } })
      await json(`${base}/auth/login`, { method: 'POST', body: { email, password: 'wrong password here' } })
      await json(`${base}/auth/login`, {
        method: 'POST',
        body: { email: 'nobody@example.com', password: PASSWORD },
      })
      const login = await json(`${base}/auth/login`, { method: 'POST', body: { email, password: PASSWORD } })
      const { access_token, refresh_token } = login.body.data
      await json(`${base}/auth/me`, { token: access_token })
      await json(`${base}/auth/me?access_token=${access_token}`)
      const refreshed = await json(`${base}/auth/refresh`, { method: 'POST', body: { refresh_token } })
      await json(`${base}/auth/refresh`, { method: 'POST', body: { refresh_token } })
      await json(`${base}/auth/delete-refresh-token`, {
        method: 'POST',
        token: refreshed.body.data.access_token,
      })
      await json(`${base}/auth/register`, { method: 'POST', body: '{"password": "' })
      seen.push(
        access_token,
        refresh_token,
        refreshed.body.data.access_token,
        refreshed.body.data.refresh_token,
      )
    } finally {
      expect(await service.stop()).toBe(0)
    }
    const logs = [...service.stdout, ...service.stderr].join('\n')
    expect(service.stdout.length).toBeGreaterThan(10)
    for (const value of seen) expect(logs).not.toContain(value)
    expect(logs).not.toMatch(/Bearer|authorization/i)
    // what must be there: one line per request, and the failed attempt with user id and client address
    const records = service.stdout.map((line) => JSON.parse(line))
    const requestLines = records.filter((record) => record.msg === 'request')
    expect(requestLines).toHaveLength(10)
    // each names its request: its own id, the method, the path without the query string, the status
    expect(new Set(requestLines.map((record) => record.reqId)).size).toBe(10)
    expect(requestLines).toContainEqual(
      expect.objectContaining({
        method: 'GET',
        path: '/auth/me',
        statusCode: 200,
        clientAddress: '127.0.0.1',
      }),
    )
    expect(records).toContainEqual(
      expect.objectContaining({
        event: 'login_failed',
        reason: 'wrong_password',
        clientAddress: '127.0.0.1',
      }),
    )
  })

  it('SIGTERM: stops accepting, finishes the request in flight, exits 0', async () => {
    const service = await startProcess({ DATA_DIR: dir })
    const { port, hostname } = new URL(service.url)
    const body = JSON.stringify({ email: 'late@example.com', password: PASSWORD })
    const socket = connect(Number(port), hostname)
    await new Promise((resolve) => socket.once('connect', resolve))
    let response = ''
    socket.on('data', (chunk) => {
      response += chunk
    })
    // half a request is in flight when the signal arrives
    socket.write(
      `POST /auth/register HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    const exit = service.stop()
    // no new connection is accepted, once the signal is handled: however long a busy machine takes to get there
    await eventually(
      () =>
        fetch(`${service.url}/health`).then(
          () => false,
          () => true,
        ),
      30_000,
    )
    socket.write(body.slice(10))
    expect(await exit).toBe(0)
    expect(response).toMatch(/^HTTP\/1.1 200 /)
    expect(response).toContain('"email":"late@example.com"')
    socket.destroy()
    expect(service.stdout.some((line) => line.includes('shutting down'))).toBe(true)
  })

  it('cuts off a client that sends its headers too slowly', async () => {
    const service = await startProcess({
      DATA_DIR: dir,
      HEADERS_TIMEOUT_MS: '500',
      REQUEST_TIMEOUT_MS: '1000',
    })
    try {
      const { port, hostname } = new URL(service.url)
      const socket = connect(Number(port), hostname)
      await new Promise((resolve) => socket.once('connect', resolve))
      socket.write('POST /auth/login HTTP/1.1\r\nHost: x\r\n')
      const started = Date.now()
      let response = ''
      socket.on('data', (chunk) => {
        response += chunk
      })
      await new Promise((resolve) => socket.once('close', resolve))
      // the settings' half second, not Node's default of 60 s: the bound leaves a loaded machine room
      expect(Date.now() - started).toBeLessThan(20_000)
      expect(response === '' || response.startsWith('HTTP/1.1 408')).toBe(true)
      // and the service still answers others
      expect((await fetch(`${service.url}/health`)).status).toBe(200)
    } finally {
      await service.stop()
    }
  }, 60_000)

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ NODE_ENV: 'production', AUTH_JWT_SECRET: undefined }, 'AUTH_JWT_SECRET'],
    [{ NODE_ENV: 'production', AUTH_JWT_SECRET: 'too-short' }, 'AUTH_JWT_SECRET'],
    [{ DATABASE_URL: 'ftp://example.com/db' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'sqlite:/dev/null/app.db' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/tessera' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://root@127.0.0.1:1/tessera' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'redis://127.0.0.1:1' }, 'REDIS_URL'],
    [{ AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES: '-1' }, 'AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES'],
  ])('a bad value stops the start: %j exits non-zero with one line naming %s', async (env, variable) => {
    const result = await runCli(['serve'], { DATA_DIR: dir, ...env })
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(new RegExp(`^tessera: ${variable} `))
    expect(result.stdout).toBe('')
  })
})

describe('tessera (the command)', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-cli-'))
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('--help prints the usage and exits 0', async () => {
    const result = await runCli(['--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^Usage: tessera <command>/)
    expect(result.stdout).toContain('serve')
    expect(result.stdout).toContain('migrate')
  })

  it('an unknown command exits 2 with the usage', async () => {
    const result = await runCli(['bogus'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('unknown command "bogus"')
  })

  it('migrate applies the migrations once', async () => {
    const env = { DATA_DIR: dir }
    const first = await runCli(['migrate'], env)
    expect(first).toMatchObject({ code: 0, stdout: expect.stringMatching(/^applied 0001_/) })
    const second = await runCli(['migrate'], env)
    expect(second).toMatchObject({ code: 0, stdout: 'database is up to date\n' })
  })

  it('migrate from four processes at once on one SQLite file: applied once, no failure', async () => {
    const runs = await Promise.all([1, 2, 3, 4].map(() => runCli(['migrate'], { DATA_DIR: dir })))
    expect(runs.map((run) => run.code)).toEqual([0, 0, 0, 0])
    expect(runs.filter((run) => run.stdout.startsWith('applied'))).toHaveLength(1)
  })

  it('--config reads variables from a JSON file; the environment wins', async () => {
    const file = join(dir, 'config.json')
    await (await import('node:fs/promises')).writeFile(
      file,
      JSON.stringify({ HEALTH_TIMEOUT_MS: 'soon', STORAGE_TIMEOUT_MS: 2000 }),
    )
    const fromFile = await runCli(['migrate', '--config', file], { DATA_DIR: dir })
    expect(fromFile).toMatchObject({
      code: 1,
      stderr: 'tessera: HEALTH_TIMEOUT_MS must be an integer at least 1, got "soon"\n',
    })
    const overridden = await runCli(['migrate', '--config', file], {
      DATA_DIR: dir,
      HEALTH_TIMEOUT_MS: '100',
    })
    expect(overridden).toMatchObject({ code: 0, stderr: '' })
    const missing = await runCli(['migrate', '--config', join(dir, 'missing.json')], { DATA_DIR: dir })
    expect(missing).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^tessera: --config could not be read/),
    })
  })
})

describe('Service.start: the work that can wait until the port is open', () => {
  const KEY_UNOPENED = 'the second-factor data key could not be opened'
  const rotated = 'rotated-secret-0123456789-abcdefghijklmnopqrstuvw'

  it('R4.25.4 a service stopped before start() still seals the data key again under a rotated secret', async () => {
    const backend = backends[0]!
    const instance = await backend.setup()
    try {
      // the data key is made, sealed under the test secret
      await (await startTestService(backend, { instance })).close()
      // rotated, the old secret still accepted, stopped before start() ran
      const during = await startTestService(backend, {
        instance,
        start: false,
        env: { AUTH_JWT_SECRET: rotated, AUTH_JWT_PREVIOUS_SECRETS: TEST_SECRET },
      })
      await during.close()
      // the old secret gone: the data key opens under the new one
      const after = await startTestService(backend, { instance, env: { AUTH_JWT_SECRET: rotated } })
      await after.close()
      expect(after.logs().filter((line) => line.msg === KEY_UNOPENED)).toEqual([])
      // and a secret that never sealed it does not open it: the check above can fail
      const other = await startTestService(backend, {
        instance,
        env: { AUTH_JWT_SECRET: 'another-secret-0123456789-abcdefghijklmnopqrst' },
      })
      await other.close()
      expect(other.logs().filter((line) => line.msg === KEY_UNOPENED)).toHaveLength(1)
    } finally {
      await instance.teardown()
    }
  })
})
