import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BackendInstance, backends } from './support/backends.js'
import { fetchJson } from './support/fetch-json.js'
import { type RunningService, startProcess } from './support/process.js'

const PASSWORD = 'correct horse battery'
/** High enough for every request of this suite; the rate-limit test reads how much of it is left. */
const RATE_LIMIT = { RATE_LIMIT_PER_MINUTE: '1000' }

describe.each(backends)('two service processes sharing one store [$name]', (backend) => {
  let instance: BackendInstance
  let first: RunningService
  let second: RunningService
  beforeAll(async () => {
    instance = await backend.setup()
    // one after the other would hide a migration race; both start at once
    const env = { ...instance.env, ...RATE_LIMIT }
    ;[first, second] = await Promise.all([startProcess(env), startProcess(env)])
  })
  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()])
    await instance?.teardown()
  })

  it('listen on different ports', () => {
    expect(new URL(first.url).port).not.toBe(new URL(second.url).port)
  })

  it('register on one, log in on the other, refresh on the first', async () => {
    const email = `shared-${Date.now()}@example.com`
    expect(
      (await fetchJson(`${first.url}/auth/register`, { body: { email, password: PASSWORD } })).status,
    ).toBe(200)
    const login = await fetchJson(`${second.url}/auth/login`, { body: { email, password: PASSWORD } })
    expect(login.status).toBe(200)
    const refresh = await fetchJson(`${first.url}/auth/refresh`, {
      body: { refresh_token: login.body.data.refresh_token },
    })
    expect(refresh.status).toBe(200)
    // the rotation on the first is seen at once by the second
    const reuse = await fetchJson(`${second.url}/auth/refresh`, {
      body: { refresh_token: login.body.data.refresh_token },
    })
    expect(reuse.status).toBe(401)
  })

  it('of 40 concurrent refreshes with one token, split across both, exactly one succeeds', async () => {
    const email = `race-${Date.now()}@example.com`
    await fetchJson(`${first.url}/auth/register`, { body: { email, password: PASSWORD } })
    const login = await fetchJson(`${second.url}/auth/login`, { body: { email, password: PASSWORD } })
    const token = login.body.data.refresh_token
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetchJson(`${(i % 2 === 0 ? first : second).url}/auth/refresh`, { body: { refresh_token: token } }),
      ),
    )
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    expect(replies.filter((reply) => reply.status === 401)).toHaveLength(39)
  })

  it(
    backend.redis
      ? 'count rate limits together, in Redis'
      : 'count rate limits each for itself (no Redis to share counters in)',
    async () => {
      /** What is left of this address's budget for POST /auth/register after one more (invalid) request. */
      const remaining = async (service: RunningService) => {
        const reply = await fetch(`${service.url}/auth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
        expect(reply.status).toBe(400)
        return Number(reply.headers.get('x-ratelimit-remaining'))
      }
      const before = await remaining(second)
      await remaining(first)
      await remaining(first)
      // the two requests on the first count on the second too only when the counters are shared
      expect(await remaining(second)).toBe(before - 1 - (backend.redis ? 2 : 0))
    },
  )
})

// docs/api.md §3.1 across instances: the sessions, the compare-and-swap and the grace live in the shared store
describe.each(backends.filter((backend) => backend.name === 'postgres+redis'))(
  'sessions per device across two service processes [$name]',
  (backend) => {
    let instance: BackendInstance
    /** per-device, no grace: R3.7 per session */
    let strict: RunningService[] = []
    /** per-device with a grace and reuse detection */
    let graced: RunningService[] = []
    beforeAll(async () => {
      instance = await backend.setup()
      const env = { ...instance.env, ...RATE_LIMIT, AUTH_SESSIONS: 'per-device' }
      const grace = {
        ...env,
        AUTH_REFRESH_REUSE_GRACE_SECONDS: '10',
        AUTH_REFRESH_REUSE_ENDS_SESSION: 'true',
      }
      const started = await Promise.all([startProcess(env), startProcess(env)])
      strict = started
      graced = await Promise.all([startProcess(grace), startProcess(grace)])
    })
    afterAll(async () => {
      await Promise.all([...strict, ...graced].map((service) => service.stop()))
      await instance?.teardown()
    })

    const login = async (service: RunningService, email: string) => {
      const reply = await fetchJson(`${service.url}/auth/login`, { body: { email, password: PASSWORD } })
      expect(reply.status).toBe(200)
      return reply.body.data as { access_token: string; refresh_token: string }
    }
    const refreshOn = (service: RunningService, token: string) =>
      fetchJson(`${service.url}/auth/refresh`, { body: { refresh_token: token } })

    it('two devices stay logged in side by side, each refreshing on the other instance; ending one leaves the other', async () => {
      const [a, b] = strict as [RunningService, RunningService]
      const email = `devices-${Date.now()}@example.com`
      expect(
        (await fetchJson(`${a.url}/auth/register`, { body: { email, password: PASSWORD } })).status,
      ).toBe(200)
      const laptop = await login(a, email)
      const phone = await login(b, email)
      const laptopNext = await refreshOn(b, laptop.refresh_token)
      const phoneNext = await refreshOn(a, phone.refresh_token)
      expect([laptopNext.status, phoneNext.status]).toEqual([200, 200])
      const ended = await fetchJson(
        `${a.url}/auth/sessions/${JSON.parse(Buffer.from(laptop.access_token.split('.')[1] ?? '', 'base64url').toString()).sid}`,
        { method: 'DELETE', token: phoneNext.body.data.access_token },
      )
      expect(ended.status).toBe(200)
      expect((await refreshOn(b, laptopNext.body.data.refresh_token)).status).toBe(401)
      expect((await refreshOn(b, phoneNext.body.data.refresh_token)).status).toBe(200)
    })

    it('of 40 concurrent refreshes with one token, split across both, exactly one succeeds', async () => {
      const [a, b] = strict as [RunningService, RunningService]
      const email = `race-devices-${Date.now()}@example.com`
      await fetchJson(`${a.url}/auth/register`, { body: { email, password: PASSWORD } })
      const token = (await login(b, email)).refresh_token
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => refreshOn(i % 2 === 0 ? a : b, token)),
      )
      expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
      expect(replies.filter((reply) => reply.status === 401)).toHaveLength(39)
    })

    it('with a grace, 40 concurrent refreshes split across both all get the same successor: one rotation', async () => {
      const [a, b] = graced as [RunningService, RunningService]
      const email = `race-grace-${Date.now()}@example.com`
      await fetchJson(`${a.url}/auth/register`, { body: { email, password: PASSWORD } })
      const token = (await login(b, email)).refresh_token
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => refreshOn(i % 2 === 0 ? a : b, token)),
      )
      expect(replies.map((reply) => reply.status)).toEqual(Array(40).fill(200))
      const successors = new Set(replies.map((reply) => reply.body.data.refresh_token))
      expect(successors.size).toBe(1)
      expect((await refreshOn(a, [...successors][0])).status).toBe(200)
    })
  },
)
