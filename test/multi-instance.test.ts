import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BackendInstance, backends } from './support/backends.js'
import { fetchJson } from './support/fetch-json.js'
import { type RunningService, startProcess } from './support/process.js'

const PASSWORD = 'correct horse battery'

describe.each(backends)('two service processes sharing one store [$name]', (backend) => {
  let instance: BackendInstance
  let first: RunningService
  let second: RunningService
  beforeAll(async () => {
    instance = await backend.setup()
    // one after the other would hide a migration race; both start at once
    ;[first, second] = await Promise.all([startProcess(instance.env), startProcess(instance.env)])
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
})
