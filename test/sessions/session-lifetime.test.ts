import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { bearer, call, expectError, type Reply, registerUser } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const LIFETIME_DAYS = 3
const LIFETIME = LIFETIME_DAYS * DAY
const GRACE_SECONDS = 10

const refresh = (service: TestService, token: string): Promise<Reply> =>
  call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: token } })

/** Refreshes with `token`, which must succeed; resolves with the new refresh and access tokens. */
const refreshed = async (service: TestService, token: string) => {
  const reply = await refresh(service, token)
  expect(reply.status, reply.text).toBe(200)
  return {
    refreshToken: reply.body.data.refresh_token as string,
    accessToken: reply.body.data.access_token as string,
  }
}

// docs/api.md R3.16: AUTH_SESSION_LIFETIME_DAYS on every backend, with the service clock moved forward
describe.each(backends)('the absolute session lifetime [$name]', (backend) => {
  const clock = createFixedClock(Date.now())
  let instance: BackendInstance
  /** AUTH_SESSION_LIFETIME_DAYS=3, with a reuse grace and reuse detection. */
  let bounded: TestService
  /** The same store without the setting: a session lives while it is refreshed. With reuse detection alone. */
  let unbounded: TestService
  beforeAll(async () => {
    instance = await backend.setup()
    const detection = { AUTH_REFRESH_REUSE_ENDS_SESSION: 'true' }
    ;[bounded, unbounded] = await Promise.all([
      startTestService(backend, {
        clock,
        instance,
        env: {
          ...detection,
          AUTH_SESSION_LIFETIME_DAYS: String(LIFETIME_DAYS),
          AUTH_REFRESH_REUSE_GRACE_SECONDS: String(GRACE_SECONDS),
        },
      }),
      startTestService(backend, { clock, instance, env: detection }),
    ])
  })
  afterAll(async () => {
    await Promise.all([bounded?.close(), unbounded?.close()])
    await instance?.teardown()
  })

  it('R3.16 a session refreshed every 12 hours refreshes until its lifetime, and is refused from then on', async () => {
    const user = await registerUser(bounded.app)
    // the login of registerUser started the session
    const startedAt = clock.now()
    let tokens = { refreshToken: user.refreshToken, accessToken: user.accessToken }
    for (let age = 12 * HOUR; age < LIFETIME; age += 12 * HOUR) {
      clock.set(startedAt + age)
      tokens = await refreshed(bounded, tokens.refreshToken)
    }
    // the last millisecond of its lifetime; its refresh token, a day old at most, would live for days yet
    clock.set(startedAt + LIFETIME - 1)
    tokens = await refreshed(bounded, tokens.refreshToken)
    clock.set(startedAt + LIFETIME)
    expectError(await refresh(bounded, tokens.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    // the session has ended: its last access token, still valid, lists none
    const listed = await call(bounded.app, 'GET', '/auth/sessions', { headers: bearer(tokens.accessToken) })
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.data).toEqual([])
    // nor does the instance without the setting refresh it: the session's stored expiry was its lifetime's end
    expectError(await refresh(unbounded, tokens.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    // a login starts a session of its own lifetime
    const again = await call(bounded.app, 'POST', '/auth/login', {
      body: { email: user.email, password: user.password },
    })
    expect(again.status, again.text).toBe(200)
    clock.advance(LIFETIME - 1)
    await refreshed(bounded, again.body.data.refresh_token)
  })

  it('without the setting, the same session keeps refreshing past that age', async () => {
    const user = await registerUser(unbounded.app)
    const startedAt = clock.now()
    let token = user.refreshToken
    // twice the lifetime the other instance sets
    for (let age = 12 * HOUR; age <= 2 * LIFETIME; age += 12 * HOUR) {
      clock.set(startedAt + age)
      token = (await refreshed(unbounded, token)).refreshToken
    }
  })

  it('a session started without the setting is refused once it is older, whatever its refresh token says', async () => {
    const user = await registerUser(unbounded.app)
    const startedAt = clock.now()
    clock.set(startedAt + LIFETIME - DAY)
    const { refreshToken } = await refreshed(unbounded, user.refreshToken)
    // its token, refreshed a day ago, is good for six days more; the session's lifetime has ended
    clock.set(startedAt + LIFETIME)
    expectError(await refresh(bounded, refreshToken), 401, MESSAGES.refreshTokenInvalid)
    // the chain's current token, refused for the session's age: no reuse (R3.15) to detect
    const detected = bounded.logs().filter((line) => line.event === 'refresh_reuse_detected')
    expect(detected.map((line) => line.userId)).not.toContain(user.id)
  })

  it('the reuse grace answers a replay within the lifetime, never after its end', async () => {
    const user = await registerUser(bounded.app)
    const startedAt = clock.now()
    clock.set(startedAt + LIFETIME - 5_000)
    const first = await refreshed(bounded, user.refreshToken)
    // within the grace and the lifetime: the same successor again
    clock.set(startedAt + LIFETIME - 1)
    const replay = await refreshed(bounded, user.refreshToken)
    expect(replay.refreshToken).toBe(first.refreshToken)
    // still within the grace of that rotation, but the session's lifetime is over
    clock.set(startedAt + LIFETIME)
    expectError(await refresh(bounded, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expectError(await refresh(bounded, first.refreshToken), 401, MESSAGES.refreshTokenInvalid)
  })

  it('nor for a session rotated without the setting, whose stored expiry outlives the lifetime', async () => {
    const user = await registerUser(unbounded.app)
    const startedAt = clock.now()
    clock.set(startedAt + LIFETIME - 5_000)
    const first = await refreshed(unbounded, user.refreshToken)
    clock.set(startedAt + LIFETIME)
    expectError(await refresh(bounded, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expectError(await refresh(bounded, first.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    // neither is a reuse: the session is refused for its age, not ended
    const detected = bounded.logs().filter((line) => line.event === 'refresh_reuse_detected')
    expect(detected.map((line) => line.userId)).not.toContain(user.id)
  })
})
