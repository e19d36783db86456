import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Backend, type BackendInstance, backends } from './support/backends.js'
import { fetchJson as request } from './support/fetch-json.js'
import { type RunningService, runCli, startProcess } from './support/process.js'
import { eventually, freePort, redisServerAvailable, startRedisServer } from './support/redis-server.js'
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js'

const PASSWORD = 'correct horse battery'
/** The service's bound on a storage call and on a health check, small so the suite is quick. */
const TIMEOUTS = { STORAGE_TIMEOUT_MS: '1000', HEALTH_TIMEOUT_MS: '500' }
const INTERNAL_ERROR = { code: 500, message: 'Internal server error', data: null }
/**
 * An answer, not a hang: the settings above are a second or less, a hang never ends. The bound leaves a loaded machine
 * room; how soon the service answers is the settings' business, not a test's.
 */
const ANSWERED_MS = 15_000

async function signUp(base: string) {
  const email = `outage-${Date.now()}-${Math.random()}@example.com`
  await request(`${base}/auth/register`, { body: { email, password: PASSWORD } })
  const login = await request(`${base}/auth/login`, { body: { email, password: PASSWORD } })
  expect(login.status).toBe(200)
  return {
    email,
    access: login.body.data.access_token as string,
    refresh: login.body.data.refresh_token as string,
  }
}

/** What became of one write that a dependency's pause caught: its answer, and whether it took effect in the end. */
interface LateWrite {
  kind: 'refresh' | 'register'
  status: number
  applied: boolean
}

/**
 * Issue 11, "Outages: a 500 must mean 'not done'": registrations (started just before) and refreshes (started
 * during) are caught by a pause of the dependency longer than STORAGE_TIMEOUT_MS; once it resumes, each is checked:
 * a refresh took effect if its old token no longer works, a registration if the account logs in.
 */
async function writesCaughtByPause(
  base: string,
  pause: () => Promise<void>,
  resume: () => Promise<void>,
  options: { registrations: number; refreshes: number },
): Promise<LateWrite[]> {
  const users = []
  for (let i = 0; i < options.refreshes; i++) users.push(await signUp(base))
  const emails = Array.from(
    { length: options.registrations },
    (_, i) => `late-${i}-${Date.now()}@example.com`,
  )
  // the registrations read first, then hash (AUTH_ARGON2_* below make that take a while), then insert: the pause
  // comes between, so their inserts meet it
  const registering = emails.map((email) =>
    request(`${base}/auth/register`, { body: { email, password: PASSWORD } }),
  )
  await sleep(30)
  await pause()
  const refreshing = users.map((user) =>
    request(`${base}/auth/refresh`, { body: { refresh_token: user.refresh } }),
  )
  const [registered, refreshed] = await Promise.all([Promise.all(registering), Promise.all(refreshing)])
  await resume()
  await eventually(async () => (await request(`${base}/health`)).status === 200)
  // time for what the dependency held to run, if it is going to
  await sleep(1_500)
  const writes: LateWrite[] = []
  for (const [i, user] of users.entries()) {
    const again = await request(`${base}/auth/refresh`, { body: { refresh_token: user.refresh } })
    expect([200, 401]).toContain(again.status)
    writes.push({ kind: 'refresh', status: refreshed[i]?.status ?? 0, applied: again.status === 401 })
  }
  for (const [i, email] of emails.entries()) {
    const login = await request(`${base}/auth/login`, { body: { email, password: PASSWORD } })
    expect([200, 401]).toContain(login.status)
    writes.push({ kind: 'register', status: registered[i]?.status ?? 0, applied: login.status === 200 })
  }
  return writes
}

/** Per kind and answer: how many writes, and how many of them took effect. */
function summarize(writes: LateWrite[]): Record<string, string> {
  const summary: Record<string, string> = {}
  for (const kind of ['refresh', 'register'] as const) {
    for (const status of new Set(writes.filter((w) => w.kind === kind).map((w) => w.status))) {
      const these = writes.filter((w) => w.kind === kind && w.status === status)
      summary[`${kind} ${status}`] = `${these.filter((w) => w.applied).length} of ${these.length} applied`
    }
  }
  return summary
}

/**
 * docs/api.md R7.2, R7.3: a write answered 500 did not happen, not even later; one whose outcome is unknown is a 503
 * write_outcome_unknown; no write answers anything else while the dependency is paused.
 */
function expectHonestAnswers(writes: LateWrite[]): void {
  expect(writes.filter((w) => w.status === 500 && w.applied)).toEqual([])
  for (const write of writes) expect([200, 500, 503]).toContain(write.status)
  expect(writes.filter((w) => w.status === 200 && !w.applied)).toEqual([])
}

const haveRedisServer = redisServerAvailable('the Redis outage suite')

describe.skipIf(!haveRedisServer)(
  'outage: the Redis server this test started goes away and comes back',
  () => {
    let dir: string
    let port: number
    let redis: ChildProcess | undefined
    let service: RunningService

    const startRedis = async () => {
      // append-only with fsync always: what an operator keeping refresh tokens in Redis runs, so none is lost
      redis = await startRedisServer(port, dir, ['--appendonly', 'yes', '--appendfsync', 'always'])
    }
    const stopRedis = async () => {
      const exited = new Promise((resolve) => redis?.once('exit', resolve))
      redis?.kill('SIGTERM')
      await exited
    }

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'tessera-outage-'))
      port = await freePort()
      await startRedis()
      service = await startProcess({ DATA_DIR: dir, REDIS_URL: `redis://127.0.0.1:${port}`, ...TIMEOUTS })
    })
    afterAll(async () => {
      await service?.stop()
      if (redis?.exitCode === null) await stopRedis()
      await rm(dir, { recursive: true, force: true })
    })

    it('503 health naming redis, 500 envelopes for what needs it, no crash; recovers when it is back', async () => {
      const user = await signUp(service.url)
      await stopRedis()

      const health = await request(`${service.url}/health`)
      expect(health.status).toBe(503)
      expect(health.body).toEqual({ status: 'unavailable', checks: { database: true, redis: false } })
      expect(health.ms).toBeLessThan(ANSWERED_MS)
      const refresh = await request(`${service.url}/auth/refresh`, { body: { refresh_token: user.refresh } })
      expect(refresh.status).toBe(500)
      expect(refresh.body).toEqual(INTERNAL_ERROR)
      expect(refresh.ms).toBeLessThan(ANSWERED_MS)
      const login = await request(`${service.url}/auth/login`, {
        body: { email: user.email, password: PASSWORD },
      })
      expect(login.body).toEqual(INTERNAL_ERROR)
      // what does not need Redis keeps working
      expect((await request(`${service.url}/auth/me`, { token: user.access })).status).toBe(200)
      expect(service.child.exitCode).toBeNull()

      await startRedis()
      await eventually(async () => (await request(`${service.url}/health`)).status === 200)
      // the token stored before the outage was not lost, and was not used by the failed attempt
      const after = await request(`${service.url}/auth/refresh`, { body: { refresh_token: user.refresh } })
      expect(after.status).toBe(200)
      expect(
        service.stdout.filter((line) => line.includes('redis connection')),
        service.stdout.join('\n'),
      ).toHaveLength(2)
      expect(service.stdout.some((line) => line.includes('redis connection lost'))).toBe(true)
      expect(service.stdout.some((line) => line.includes('redis connection restored'))).toBe(true)
    })

    it('R7.2 a refresh that answered 500 while Redis was paused did not rotate once it woke up (none did: past its deadline)', async () => {
      const writes = await writesCaughtByPause(
        service.url,
        async () => void redis?.kill('SIGSTOP'),
        async () => void redis?.kill('SIGCONT'),
        { registrations: 0, refreshes: 16 },
      )
      console.log(`late writes, redis: ${JSON.stringify(summarize(writes))}`)
      expectHonestAnswers(writes)
      // each script reached Redis before the pause and ran after it, past the deadline it carries
      expect(writes.filter((w) => w.applied)).toEqual([])
      expect(service.child.exitCode).toBeNull()
    })
  },
)

/** SQLite, and PostgreSQL when the environment names it: the SQL stores beside a Redis of the test's own. */
const sqlBesideRedis = backends.filter((backend) => backend.name === 'sqlite' || backend.name === 'postgres')

describe.skipIf(!haveRedisServer).each(sqlBesideRedis)(
  'outage: Redis is killed while accounts register [$name+redis]',
  (backend: Backend) => {
    let instance: BackendInstance
    let port: number
    let redis: ChildProcess | undefined
    let service: RunningService

    beforeAll(async () => {
      instance = await backend.setup()
      port = await freePort()
      redis = await startRedisServer(port, instance.env.DATA_DIR as string)
      service = await startProcess({ ...instance.env, REDIS_URL: `redis://127.0.0.1:${port}`, ...TIMEOUTS })
    })
    afterAll(async () => {
      await service?.stop()
      if (redis?.exitCode === null) redis.kill('SIGKILL')
      await instance?.teardown()
    })

    it('R7.2 a registration that answers 500 was not made: no account, no audit event; the retry registers it', async () => {
      const before = await signUp(service.url)
      const exited = new Promise((resolve) => redis?.once('exit', resolve))
      redis?.kill('SIGKILL')
      await exited

      const email = `all-or-nothing-${Date.now()}@example.com`
      const answer = await request(`${service.url}/auth/register`, { body: { email, password: PASSWORD } })
      expect(answer.status).toBe(500)
      expect(answer.body).toEqual(INTERNAL_ERROR)
      // the SQL store (which tessera audit reads without Redis) holds no such account and no event of it
      const audit = await runCli(['audit', '--user', email], instance.env)
      expect(audit).toMatchObject({
        code: 1,
        stderr: `tessera audit: no account has the e-mail ${email} (a deleted one: give its id)\n`,
      })
      expect(service.child.exitCode).toBeNull()

      redis = await startRedisServer(port, instance.env.DATA_DIR as string)
      await eventually(async () => (await request(`${service.url}/health`)).status === 200)
      const login = await request(`${service.url}/auth/login`, { body: { email, password: PASSWORD } })
      expect(login.status).toBe(401)
      const retry = await request(`${service.url}/auth/register`, { body: { email, password: PASSWORD } })
      expect(retry.status).toBe(200)
      // an account registered before the outage is untouched
      expect((await request(`${service.url}/auth/me`, { token: before.access })).status).toBe(200)
    })
  },
)

/** The SQL backends served by a real server (not SQLite, which cannot go away). */
const serverDatabases = backends.filter((backend) => backend.name === 'postgres' || backend.name === 'mysql')
if (serverDatabases.length === 0)
  console.warn('skipping the database outage suite: neither TEST_POSTGRES_URL nor TEST_MYSQL_URL is set')

describe.each(serverDatabases)(
  'outage: the database [$name] stops answering and comes back',
  (backend: Backend) => {
    let instance: BackendInstance
    let proxy: TcpProxy
    let service: RunningService

    beforeAll(async () => {
      instance = await backend.setup()
      const url = new URL(instance.env.DATABASE_URL as string)
      proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) })
      url.port = String(proxy.port)
      service = await startProcess({
        ...instance.env,
        DATABASE_URL: url.toString(),
        ...TIMEOUTS,
        // hashing that takes a while, so that a registration's insert comes well after its read
        AUTH_ARGON2_MEMORY_KIB: '19456',
        AUTH_ARGON2_TIME_COST: '8',
      })
    })
    afterAll(async () => {
      await service?.stop()
      await proxy?.close()
      await instance?.teardown()
    })

    const expectOutage = async (user: { email: string; access: string; refresh: string }) => {
      const health = await request(`${service.url}/health`)
      expect(health.status).toBe(503)
      expect(health.body).toEqual({ status: 'unavailable', checks: { database: false } })
      expect(health.ms).toBeLessThan(ANSWERED_MS)
      for (const reply of [
        await request(`${service.url}/auth/login`, { body: { email: user.email, password: PASSWORD } }),
        await request(`${service.url}/auth/refresh`, { body: { refresh_token: user.refresh } }),
        await request(`${service.url}/auth/me`, { token: user.access }),
      ]) {
        expect(reply.status).toBe(500)
        expect(reply.body).toEqual(INTERNAL_ERROR)
        // bounded by STORAGE_TIMEOUT_MS, never a hang
        expect(reply.ms).toBeLessThan(ANSWERED_MS)
      }
      expect(service.child.exitCode).toBeNull()
    }

    const expectRecovery = async (user: { refresh: string }) => {
      await eventually(async () => (await request(`${service.url}/health`)).status === 200)
      await eventually(async () => {
        const reply = await request(`${service.url}/auth/refresh`, { body: { refresh_token: user.refresh } })
        if (reply.status === 200) user.refresh = reply.body.data.refresh_token
        return reply.status === 200
      })
    }

    it('the server is down (connections refused): 503 health, 500 envelopes, no crash; then it recovers', async () => {
      const user = await signUp(service.url)
      await proxy.mode('refuse')
      await expectOutage(user)
      await proxy.mode('forward')
      await expectRecovery(user)
    })

    it('the server hangs (nothing answers): requests still end with a 500 within the timeout; then it recovers', async () => {
      const user = await signUp(service.url)
      await proxy.mode('blackhole')
      await expectOutage(user)
      await proxy.mode('forward')
      await expectRecovery(user)
    })

    it('R7.2 a write that answered 500 while the server was paused did not happen once it woke up', async () => {
      const writes = await writesCaughtByPause(
        service.url,
        () => proxy.mode('hold'),
        () => proxy.mode('forward'),
        { registrations: 8, refreshes: 16 },
      )
      console.log(`late writes, ${backend.name}: ${JSON.stringify(summarize(writes))}`)
      expectHonestAnswers(writes)
      expect(service.child.exitCode).toBeNull()
    })
  },
)
