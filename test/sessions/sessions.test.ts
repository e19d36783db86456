import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { sampleValue, scrape } from '../metrics/prometheus-text.js'
import { backends } from '../support/backends.js'
import { bearer, call, decodeJwt, expectError, PASSWORD, type Reply, registerUser } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { freePort } from '../support/redis-server.js'
import { startTestService, type TestService } from '../support/test-service.js'

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
const PHONE =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36'

interface Device {
  accessToken: string
  refreshToken: string
}

const login = async (service: TestService, email: string, userAgent = FIREFOX): Promise<Device> => {
  const reply = await call(service.app, 'POST', '/auth/login', {
    body: { email, password: PASSWORD },
    headers: { 'user-agent': userAgent },
  })
  expect(reply.status, reply.text).toBe(200)
  return { accessToken: reply.body.data.access_token, refreshToken: reply.body.data.refresh_token }
}
const refresh = (service: TestService, token: string): Promise<Reply> =>
  call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: token } })
const sessions = (service: TestService, accessToken: string) =>
  call(service.app, 'GET', '/auth/sessions', { headers: bearer(accessToken) })
const endSession = (service: TestService, accessToken: string, id: string) =>
  call(service.app, 'DELETE', `/auth/sessions/${id}`, { headers: bearer(accessToken) })
const logout = (service: TestService, accessToken: string, scope?: string) =>
  call(service.app, 'POST', '/auth/delete-refresh-token', {
    headers: bearer(accessToken),
    ...(scope === undefined ? {} : { query: { scope } }),
  })
const sidOf = (token: string): string => decodeJwt(token).claims.sid

/** Refreshes `device` in place; the refresh must succeed. */
const rotate = async (service: TestService, device: Device): Promise<void> => {
  const reply = await refresh(service, device.refreshToken)
  expect(reply.status, reply.text).toBe(200)
  device.accessToken = reply.body.data.access_token
  device.refreshToken = reply.body.data.refresh_token
}

// docs/api.md §3 "Sessions", §4.11, §4.12: AUTH_SESSIONS=per-device on every backend
describe.each(backends)('sessions per device [$name]', (backend) => {
  let service: TestService
  const clock = createFixedClock(Date.now())
  beforeAll(async () => {
    service = await startTestService(backend, { clock, env: { AUTH_SESSIONS: 'per-device' } })
  })
  afterAll(() => service?.close())

  it('keeps two devices logged in side by side, each refreshing; ending one leaves the other', async () => {
    const user = await registerUser(service.app)
    const laptop = await login(service, user.email, FIREFOX)
    const phone = await login(service, user.email, PHONE)
    // the registration and the first login of registerUser are sessions too: four in all
    await rotate(service, laptop)
    await rotate(service, phone)
    // the clock stands still unless moved: the laptop's last refresh is the latest
    clock.advance(1000)
    await rotate(service, laptop)
    expect(sidOf(laptop.accessToken)).toMatch(/^[0-9a-f]{32}$/)
    expect(sidOf(laptop.accessToken)).toBe(sidOf(laptop.refreshToken))
    expect(sidOf(phone.accessToken)).not.toBe(sidOf(laptop.accessToken))

    const listed = await sessions(service, phone.accessToken)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.data).toHaveLength(4)
    const mine = listed.body.data.find((session: { current: boolean }) => session.current)
    expect(mine).toMatchObject({
      id: sidOf(phone.accessToken),
      device: 'Chrome on Android',
      client_address: '127.0.0.0/24',
    })
    expect(listed.body.data.filter((session: { current: boolean }) => session.current)).toHaveLength(1)
    expect(listed.body.data.map((session: { device: string }) => session.device)).toContain(
      'Firefox on Linux',
    )
    // most recently used first: the laptop refreshed last
    expect(listed.body.data[0].id).toBe(sidOf(laptop.accessToken))

    const ended = await endSession(service, phone.accessToken, sidOf(laptop.accessToken))
    expect(ended.status, ended.text).toBe(200)
    expect(ended.body).toEqual({ code: 200, message: 'Success', data: null })
    expectError(await refresh(service, laptop.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    await rotate(service, phone)
    expect((await sessions(service, phone.accessToken)).body.data).toHaveLength(3)
  })

  it("answers 404 for an id that is not one of the caller's sessions, whether it exists or not", async () => {
    const alice = await registerUser(service.app)
    const bob = await registerUser(service.app)
    const aliceDevice = await login(service, alice.email)
    const bobDevice = await login(service, bob.email)
    for (const id of [sidOf(bobDevice.accessToken), '0'.repeat(32), 'not-an-id']) {
      expectError(await endSession(service, aliceDevice.accessToken, id), 404, 'Session not found')
    }
    // Bob's session is untouched
    await rotate(service, bobDevice)
  })

  it('the eleventh session ends the least recently used one', async () => {
    const user = await registerUser(service.app)
    // registerUser's two sessions are ended first, so that the ten below are the user's only ones
    expect((await logout(service, user.accessToken, 'all')).status).toBe(200)
    const devices: Device[] = []
    for (let i = 0; i < 10; i++) {
      clock.advance(1000)
      devices.push(await login(service, user.email))
    }
    // the first device is used again: the second is now the least recently used
    clock.advance(1000)
    await rotate(service, devices[0] as Device)
    clock.advance(1000)
    const eleventh = await login(service, user.email)
    const listed = await sessions(service, eleventh.accessToken)
    expect(listed.body.data).toHaveLength(10)
    expect(listed.body.data.map((session: { id: string }) => session.id)).not.toContain(
      sidOf((devices[1] as Device).accessToken),
    )
    expectError(
      await refresh(service, (devices[1] as Device).refreshToken),
      401,
      MESSAGES.refreshTokenInvalid,
    )
    await rotate(service, devices[0] as Device)
    await rotate(service, devices[2] as Device)
  })

  it('of 50 concurrent refreshes with one token, exactly one succeeds, and the other sessions are untouched', async () => {
    const user = await registerUser(service.app)
    const other = await login(service, user.email)
    const token = user.refreshToken
    const replies = await Promise.all(Array.from({ length: 50 }, () => refresh(service, token)))
    const won = replies.filter((reply) => reply.status === 200)
    expect(won).toHaveLength(1)
    for (const reply of replies.filter((candidate) => candidate.status !== 200)) {
      expectError(reply, 401, MESSAGES.refreshTokenInvalid)
    }
    expect((await refresh(service, won[0]?.body.data.refresh_token)).status).toBe(200)
    await rotate(service, other)
  })

  it('logout ends only the caller’s session; scope=others the others; scope=all every one', async () => {
    const user = await registerUser(service.app)
    const [a, b, c] = [
      await login(service, user.email),
      await login(service, user.email),
      await login(service, user.email),
    ]
    if (a === undefined || b === undefined || c === undefined) throw new Error('three logins')
    expect((await logout(service, a.accessToken)).status).toBe(200)
    expectError(await refresh(service, a.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    await rotate(service, b)

    expect((await logout(service, b.accessToken, 'others')).status).toBe(200)
    expectError(await refresh(service, c.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    const left = await sessions(service, b.accessToken)
    expect(left.body.data.map((session: { id: string }) => session.id)).toEqual([sidOf(b.accessToken)])
    await rotate(service, b)

    const d = await login(service, user.email)
    expect((await logout(service, d.accessToken, 'all')).status).toBe(200)
    expectError(await refresh(service, b.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expectError(await refresh(service, d.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expect((await sessions(service, d.accessToken)).body.data).toEqual([])
  })

  it('refuses an unknown scope with a 400 that changes nothing', async () => {
    const user = await registerUser(service.app)
    const reply = await logout(service, user.accessToken, 'everything')
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.data.errors[0].field).toBe('/scope')
    await rotate(service, { accessToken: user.accessToken, refreshToken: user.refreshToken })
  })

  it('another method on a session is a 405 naming DELETE; a path beneath it a 404', async () => {
    const reply = await call(service.app, 'GET', `/auth/sessions/${'0'.repeat(32)}`)
    expectError(reply, 405, MESSAGES.methodNotAllowed)
    expect(reply.headers.allow).toBe('DELETE')
    expectError(
      await call(service.app, 'DELETE', `/auth/sessions/${'0'.repeat(32)}/x`),
      404,
      MESSAGES.notFound,
    )
  })

  it('the session routes need a valid access token', async () => {
    expectError(await call(service.app, 'GET', '/auth/sessions'), 401, MESSAGES.authorizationMissing)
    const user = await registerUser(service.app)
    expectError(
      await call(service.app, 'GET', '/auth/sessions', { headers: bearer(user.refreshToken) }),
      401,
      MESSAGES.tokenWrongType,
    )
  })
})

// AUTH_REFRESH_REUSE_GRACE_SECONDS and AUTH_REFRESH_REUSE_ENDS_SESSION, per device, on every backend
describe.each(backends)('the reuse grace and reuse detection [$name]', (backend) => {
  const GRACE_SECONDS = 10
  let withDetection: TestService
  let graceOnly: TestService
  let metricsUrl: string
  const clock = createFixedClock(Date.now())
  beforeAll(async () => {
    const grace = { AUTH_SESSIONS: 'per-device', AUTH_REFRESH_REUSE_GRACE_SECONDS: String(GRACE_SECONDS) }
    const metricsPort = await freePort()
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
    const detection = { AUTH_REFRESH_REUSE_ENDS_SESSION: 'true', METRICS_PORT: String(metricsPort) }
    ;[withDetection, graceOnly] = await Promise.all([
      startTestService(backend, { clock, env: { ...grace, ...detection } }),
      startTestService(backend, { clock, env: grace }),
    ])
  })
  afterAll(async () => {
    await Promise.all([withDetection?.close(), graceOnly?.close()])
  })

  const reusesDetected = async () =>
    sampleValue(await scrape(metricsUrl), 'tessera_refresh_reuse_detected_total', {}) ?? 0

  it('of 50 concurrent refreshes with one token, every one succeeds with the same successor: one rotation', async () => {
    const user = await registerUser(withDetection.app)
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => refresh(withDetection, user.refreshToken)),
    )
    expect(replies.map((reply) => reply.status)).toEqual(Array(50).fill(200))
    const successors = new Set(replies.map((reply) => reply.body.data.refresh_token))
    expect(successors.size).toBe(1)
    const [successor] = successors
    // exactly one rotation: the successor is current and rotates once more
    expect((await refresh(withDetection, successor)).status).toBe(200)
    expect(withDetection.logs().filter((line) => line.event === 'refresh_reuse_detected')).toEqual([])
  })

  it('inside the grace a replayed token gets the identical successor and a fresh access token', async () => {
    const user = await registerUser(withDetection.app)
    const first = await refresh(withDetection, user.refreshToken)
    expect(first.status).toBe(200)
    clock.advance(GRACE_SECONDS * 1000)
    const replay = await refresh(withDetection, user.refreshToken)
    expect(replay.status, replay.text).toBe(200)
    expect(replay.body.data.refresh_token).toBe(first.body.data.refresh_token)
    expect(decodeJwt(replay.body.data.access_token).claims).toMatchObject({
      sub: user.id,
      token_type: 'Access',
      sid: sidOf(first.body.data.access_token),
    })
    const me = await call(withDetection.app, 'GET', '/auth/me', {
      headers: bearer(replay.body.data.access_token),
    })
    expect(me.status).toBe(200)
  })

  it('a replay whose successor has been rotated since is refused, even inside the grace', async () => {
    const user = await registerUser(graceOnly.app)
    const first = await refresh(graceOnly, user.refreshToken)
    const second = await refresh(graceOnly, first.body.data.refresh_token)
    expect(second.status).toBe(200)
    expectError(await refresh(graceOnly, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expect((await refresh(graceOnly, second.body.data.refresh_token)).status).toBe(200)
  })

  it('outside the grace a replay is a 401; without detection the successor keeps working', async () => {
    const user = await registerUser(graceOnly.app)
    const first = await refresh(graceOnly, user.refreshToken)
    clock.advance(GRACE_SECONDS * 1000 + 1)
    expectError(await refresh(graceOnly, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expect((await refresh(graceOnly, first.body.data.refresh_token)).status).toBe(200)
  })

  it('outside the grace, with detection on, a replay ends the session: the successor stops working too', async () => {
    const user = await registerUser(withDetection.app)
    const other = await login(withDetection, user.email)
    const first = await refresh(withDetection, user.refreshToken)
    const second = await refresh(withDetection, first.body.data.refresh_token)
    const detectedBefore = await reusesDetected()
    clock.advance(GRACE_SECONDS * 1000 + 1)
    // the token two rotations back finds its session by its sid
    expectError(await refresh(withDetection, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expectError(
      await refresh(withDetection, second.body.data.refresh_token),
      401,
      MESSAGES.refreshTokenInvalid,
    )
    const detected = withDetection.logs().filter((line) => line.event === 'refresh_reuse_detected')
    expect(detected.map((line) => line.userId)).toContain(user.id)
    expect((await reusesDetected()) - detectedBefore).toBe(1)
    // the audit trail is written in batches, off the request path (docs/api.md R6.3.3)
    await vi.waitFor(
      async () => {
        const events = await withDetection.stores.audit.list({ userId: user.id })
        expect(events.map((event) => event.type)).toContain('refresh_reuse_detected')
      },
      { timeout: 5000 },
    )
    // another session of the same user is not ended
    await rotate(withDetection, other)
  })
})

// AUTH_SESSIONS=single (the default): the same endpoints, one session
describe.each(backends)('the one session of single mode [$name]', (backend) => {
  let service: TestService
  let detecting: TestService
  beforeAll(async () => {
    ;[service, detecting] = await Promise.all([
      startTestService(backend),
      startTestService(backend, { env: { AUTH_REFRESH_REUSE_ENDS_SESSION: 'true' } }),
    ])
  })
  afterAll(async () => {
    await Promise.all([service?.close(), detecting?.close()])
  })

  it('R3.15 with reuse detection, refresh tokens alone carry sid, and a reuse ends the one session', async () => {
    const user = await registerUser(detecting.app)
    expect(decodeJwt(user.accessToken).claims).not.toHaveProperty('sid')
    const sid = decodeJwt(user.refreshToken).claims.sid
    expect(sid).toMatch(/^[0-9a-f]{32}$/)
    const first = await refresh(detecting, user.refreshToken)
    expect(first.status).toBe(200)
    expect(decodeJwt(first.body.data.refresh_token).claims.sid).toBe(sid)
    expect(decodeJwt(first.body.data.access_token).claims).not.toHaveProperty('sid')
    expectError(await refresh(detecting, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expectError(await refresh(detecting, first.body.data.refresh_token), 401, MESSAGES.refreshTokenInvalid)
    expect((await sessions(detecting, first.body.data.access_token)).body.data).toEqual([])
  })

  it('lists the one session as current, keeps tokens without sid, and a login replaces it', async () => {
    const user = await registerUser(service.app)
    expect(decodeJwt(user.accessToken).claims).not.toHaveProperty('sid')
    expect(decodeJwt(user.refreshToken).claims).not.toHaveProperty('sid')
    const listed = await sessions(service, user.accessToken)
    expect(listed.body.data).toHaveLength(1)
    expect(listed.body.data[0].current).toBe(true)
    const again = await login(service, user.email)
    const after = await sessions(service, again.accessToken)
    expect(after.body.data).toHaveLength(1)
    expect(after.body.data[0].id).not.toBe(listed.body.data[0].id)
    expect((await logout(service, again.accessToken, 'others')).status).toBe(200)
    await rotate(service, again)
    expect((await endSession(service, again.accessToken, after.body.data[0].id)).status).toBe(200)
    expectError(await refresh(service, again.refreshToken), 401, MESSAGES.refreshTokenInvalid)
  })
})
