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
