import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { call, PASSWORD, registerUser, uniqueEmail } from '../support/http.js'
import {
  freePort,
  redisServerAvailable,
  startRedisServer,
  eventually as until,
} from '../support/redis-server.js'
import { startTestService, type TestService } from '../support/test-service.js'

const haveRedisServer = redisServerAvailable('the guessing-while-Redis-is-down suite')
const sqlite = backends.find((backend) => backend.name === 'sqlite')

// issue 11, "Redis down opens the door": the limits hold while their store is down, and a login does not tell a
// right password from a wrong one by its status (docs/api.md R8.1, R8.4, R4.4.5)
describe.skipIf(!haveRedisServer || sqlite === undefined)('guessing while Redis is down', () => {
  let dir: string
  let port: number
  let redis: ChildProcess | undefined
  let service: TestService

  const startRedis = async () => {
    redis = await startRedisServer(port, dir)
  }
  const stopRedis = async () => {
    if (redis === undefined || redis.exitCode !== null) return
    const exited = new Promise((resolve) => redis?.once('exit', resolve))
    redis.kill('SIGTERM')
    await exited
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-guessing-'))
    port = await freePort()
    await startRedis()
    service = await startTestService(sqlite as NonNullable<typeof sqlite>, {
      env: {
        REDIS_URL: `redis://127.0.0.1:${port}`,
        RATE_LIMIT_PER_MINUTE: '30',
        STORAGE_TIMEOUT_MS: '1000',
      },
    })
  })
  afterAll(async () => {
    await service?.close()
    await stopRedis()
    await rm(dir, { recursive: true, force: true })
  })

  const login = (email: string, password: string) =>
    call(service.app, 'POST', '/auth/login', { body: { email, password } })

  it('Redis down opens the door: no longer; no guess is checked, the limits count in the process, and a right password answers as a wrong one', async () => {
    const ada = await registerUser(service.app)
    const bob = await registerUser(service.app)
    await stopRedis()

    // the same answer for the right and the wrong password, whichever comes first
    const right = await login(bob.email, PASSWORD)
    const wrong = await login(bob.email, 'wrong password')
    expect(right.status).toBeGreaterThanOrEqual(500)
    expect({ status: wrong.status, body: wrong.body }).toEqual({ status: right.status, body: right.body })
    const wrongFirst = await login(ada.email, 'wrong password')
    const rightAfter = await login(ada.email, PASSWORD)
    expect({ status: rightAfter.status, body: rightAfter.body }).toEqual({
      status: wrongFirst.status,
      body: wrongFirst.body,
    })

    // 200 guesses from one address: none is checked, and the limits, counted in the process, refuse them with 429
    const statuses: number[] = []
    for (let i = 0; i < 100; i++) statuses.push((await login(ada.email, `guess ${i}`)).status)
    for (let i = 0; i < 100; i++) statuses.push((await login(uniqueEmail(), `guess ${i}`)).status)
    expect(statuses.filter((status) => status === 401)).toEqual([])
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(150)
    expect(service.logs().filter((record) => record.event === 'login_failed')).toEqual([])

    // register and refresh keep their per-attempt limit, counted in the process
    const refreshes: number[] = []
    for (let i = 0; i < 31; i++) {
      const reply = await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: `junk-${i}` } })
      refreshes.push(reply.status)
    }
    expect(refreshes.slice(0, 30)).toEqual(Array(30).fill(401))
    expect(refreshes[30]).toBe(429)

    // back: the owner logs in from the address it registered from (its exemption lives in Redis)
    await startRedis()
    await until(async () => (await login(bob.email, PASSWORD)).status === 200)
    expect((await login(bob.email, 'wrong password')).status).toBe(401)
  })
})
