import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Backend, type BackendInstance, backends } from './support/backends.js'
import { fetchJson as request } from './support/fetch-json.js'
import { type RunningService, startProcess } from './support/process.js'
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js'

const PASSWORD = 'correct horse battery'
/** The service's bound on a storage call and on a health check, small so the suite is quick. */
const TIMEOUTS = { STORAGE_TIMEOUT_MS: '1000', HEALTH_TIMEOUT_MS: '500' }
const INTERNAL_ERROR = { code: 500, message: 'Internal server error', data: null }

/** Polls until the check holds (the service recovers by itself), or fails after the deadline. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not recovered within ${timeoutMs} ms`)
    await sleep(100)
  }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

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

const REDIS_SERVER = '/usr/bin/redis-server'
const haveRedisServer = existsSync(REDIS_SERVER)
if (!haveRedisServer) console.warn(`skipping the Redis outage suite: no ${REDIS_SERVER}`)

describe.skipIf(!haveRedisServer)(
  'outage: the Redis server this test started goes away and comes back',
  () => {
    let dir: string
    let port: number
    let redis: ChildProcess | undefined
    let service: RunningService

    const startRedis = async () => {
      // append-only with fsync always: what an operator keeping refresh tokens in Redis runs, so none is lost
      redis = spawn(
        REDIS_SERVER,
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'yes',
          '--appendfsync',
          'always',
          '--dir',
          dir,
        ],
        { stdio: 'ignore' },
      )
      await eventually(
        () =>
          new Promise<boolean>((resolve) => {
            const probe = connect(port, '127.0.0.1')
            probe.once('connect', () => {
              probe.destroy()
              resolve(true)
            })
            probe.once('error', () => resolve(false))
          }),
        10_000,
      )
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
      expect(health.ms).toBeLessThan(2_000)
      const refresh = await request(`${service.url}/auth/refresh`, { body: { refresh_token: user.refresh } })
      expect(refresh.status).toBe(500)
      expect(refresh.body).toEqual(INTERNAL_ERROR)
      expect(refresh.ms).toBeLessThan(3_000)
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
      service = await startProcess({ ...instance.env, DATABASE_URL: url.toString(), ...TIMEOUTS })
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
      expect(health.ms).toBeLessThan(2_000)
      for (const reply of [
        await request(`${service.url}/auth/login`, { body: { email: user.email, password: PASSWORD } }),
        await request(`${service.url}/auth/refresh`, { body: { refresh_token: user.refresh } }),
        await request(`${service.url}/auth/me`, { token: user.access }),
      ]) {
        expect(reply.status).toBe(500)
        expect(reply.body).toEqual(INTERNAL_ERROR)
        // bounded by STORAGE_TIMEOUT_MS, never a hang
        expect(reply.ms).toBeLessThan(3_000)
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
  },
)
