import { randomBytes } from 'node:crypto'
import { authenticator } from 'otplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { backends } from '../support/backends.js'
import { bearer, call, expectError, PASSWORD, registerUser } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'
import { ADMIN_MESSAGES, adminCall, newAdmin } from './admin-harness.js'

// docs/api.md R4.27.3 on every backend, ADMIN_REQUIRE_MFA on (its default): an admin needs a confirmed second factor
// and a session established with it. Codes are computed by otplib, not by the service's own otpauth.

const STEP_MS = 30_000

/** Every admin endpoint, sent for `target`: what the second factor is checked on. */
const SENDS = [
  (token: string, _target: string, app: TestService['app']) => adminCall(app, 'GET', '/admin/users', token),
  (token: string, target: string, app: TestService['app']) =>
    adminCall(app, 'GET', `/admin/users/${target}`, token),
  (token: string, target: string, app: TestService['app']) =>
    adminCall(app, 'PUT', `/admin/users/${target}`, token, { status: 'disabled' }),
  (token: string, target: string, app: TestService['app']) =>
    adminCall(app, 'POST', `/admin/users/${target}/revoke`, token),
  (token: string, target: string, app: TestService['app']) =>
    adminCall(app, 'POST', `/admin/users/${target}/mfa-reset`, token),
  (token: string, target: string, app: TestService['app']) =>
    adminCall(app, 'DELETE', `/admin/users/${target}`, token),
  (token: string, _target: string, app: TestService['app']) => adminCall(app, 'GET', '/admin/audit', token),
]

describe.each(backends)('the admin API with ADMIN_REQUIRE_MFA [$name]', (backend) => {
  let service: TestService
  // the middle of a 30-second step, so that "the next step" is never a boundary away
  const clock = createFixedClock(Math.floor(Date.now() / STEP_MS) * STEP_MS + STEP_MS / 2)
  beforeAll(async () => {
    service = await startTestService(backend, { clock })
  })
  afterAll(() => service?.close())

  const app = () => service.app
  const appCode = (secret: string) => authenticator.clone({ epoch: clock.now() }).generate(secret)

  it('R4.27.3 an admin without a second factor is refused at every endpoint; a user is Forbidden first', async () => {
    const admin = await newAdmin(service)
    const user = await registerUser(service.app)
    const target = await registerUser(service.app)
    for (const send of SENDS) {
      expectError(await send(admin.accessToken, target.id, app()), 403, ADMIN_MESSAGES.secondFactorRequired)
      expectError(await send(user.accessToken, target.id, app()), 403, ADMIN_MESSAGES.forbidden)
    }
    expect(await service.stores.users.findById(target.id)).toMatchObject({ status: 'active' })
  })

  it('R4.27.3 with a TOTP factor and a session established with it: every endpoint; without the factor: refused', async () => {
    const admin = await newAdmin(service)
    expect(await service.stores.users.markEmailVerified(admin.id)).toBe(true)
    const setup = await call(app(), 'POST', '/auth/mfa/totp/setup', {
      headers: bearer(admin.accessToken),
      body: { password: PASSWORD },
    })
    expect(setup.status, setup.text).toBe(200)
    const { factor_id: factorId, secret } = setup.body.data
    const confirmed = await call(app(), 'POST', '/auth/mfa/totp/confirm', {
      headers: bearer(admin.accessToken),
      body: { factor_id: factorId, code: appCode(secret) },
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    // the session that confirmed the factor was established with it (R4.25.2)
    for (const send of SENDS) {
      const target = await registerUser(service.app)
      const reply = await send(admin.accessToken, target.id, app())
      expect(reply.status, reply.text).toBeLessThan(300)
    }
    // a new sign-in: the password, then the app's code of the next step
    clock.advance(STEP_MS)
    const challenge = await call(app(), 'POST', '/auth/login', {
      body: { email: admin.email, password: PASSWORD },
    })
    expect(challenge.body.data).toMatchObject({ mfa_required: true })
    const verified = await call(app(), 'POST', '/auth/mfa/verify', {
      body: { mfa_ticket: challenge.body.data.mfa_ticket, code: appCode(secret) },
    })
    expect(verified.status, verified.text).toBe(200)
    const token = verified.body.data.access_token
    expect((await adminCall(app(), 'GET', '/admin/users', token)).status).toBe(200)
    // the factor removed (by its own session, established with it): that session no longer counts
    const removed = await call(app(), 'DELETE', `/auth/mfa/factors/${factorId}`, { headers: bearer(token) })
    expect(removed.status, removed.text).toBe(200)
    expectError(
      await adminCall(app(), 'GET', '/admin/users', token),
      403,
      ADMIN_MESSAGES.secondFactorRequired,
    )
  })

  it('R4.27.3 an admin with a factor, in a session not established with it: refused', async () => {
    const admin = await newAdmin(service)
    // a passkey put into the store beside the login session, which no second factor established
    const added = await service.stores.factors.add({
      id: randomBytes(16).toString('hex'),
      userId: admin.id,
      type: 'passkey',
      name: 'Security key',
      confirmed: true,
      secret: null,
      lastStep: null,
      credentialId: randomBytes(32).toString('base64url'),
      publicKey: randomBytes(77).toString('base64url'),
      counter: 0,
      backedUp: false,
      transports: [],
      createdAt: clock.now(),
      lastUsedAt: null,
    })
    expect(added).toBe('added')
    expectError(
      await adminCall(app(), 'GET', '/admin/users', admin.accessToken),
      403,
      ADMIN_MESSAGES.secondFactorRequired,
    )
  })

  it('R4.27.4 GET /admin/users/{id} lists the factors and whether a session has the second factor', async () => {
    const admin = await newAdmin(service)
    expect(await service.stores.users.markEmailVerified(admin.id)).toBe(true)
    const setup = await call(app(), 'POST', '/auth/mfa/totp/setup', {
      headers: bearer(admin.accessToken),
      body: { password: PASSWORD },
    })
    const { factor_id: factorId, secret } = setup.body.data
    clock.advance(STEP_MS)
    await call(app(), 'POST', '/auth/mfa/totp/confirm', {
      headers: bearer(admin.accessToken),
      body: { factor_id: factorId, code: appCode(secret) },
    })
    const shown = await adminCall(app(), 'GET', `/admin/users/${admin.id}`, admin.accessToken)
    expect(shown.status, shown.text).toBe(200)
    expect(shown.body.data.factors).toEqual([
      { id: factorId, type: 'totp', name: 'Authenticator app', created_at: expect.any(String) },
    ])
    expect(shown.body.data.sessions).toEqual([expect.objectContaining({ second_factor: true })])
    // an admin resets the factors of another (here: their own): gone, and the sessions with them
    const reset = await adminCall(app(), 'POST', `/admin/users/${admin.id}/mfa-reset`, admin.accessToken)
    expect(reset.body.data).toEqual({ factors_removed: 1, sessions_ended: 1 })
    expect(await service.stores.factors.list(admin.id)).toEqual([])
  })
})
