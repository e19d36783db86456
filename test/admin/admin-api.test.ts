import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { userAdminOn } from '../../src/auth/user-admin.js'
import { systemClock } from '../../src/clock.js'
import { backends } from '../support/backends.js'
import {
  bearer,
  call,
  expectError,
  NEW_ACCOUNT_FIELDS,
  PASSWORD,
  type Registered,
  type Reply,
  registerUser,
} from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'
import {
  ADMIN_MESSAGES,
  ADMIN_ROLE,
  adminCall,
  createBarrier,
  heldAtAdminWrites,
  newAdmin,
} from './admin-harness.js'

/** One admin endpoint: how to send it for `target`, and its status when an admin sends it. */
interface Endpoint {
  name: string
  send(app: TestService['app'], token: string | undefined, target: string): Promise<Reply>
  ok: number
}

const ENDPOINTS: readonly Endpoint[] = [
  { name: 'GET /admin/users', send: (app, token) => adminCall(app, 'GET', '/admin/users', token), ok: 200 },
  {
    name: 'GET /admin/users/{id}',
    send: (app, token, target) => adminCall(app, 'GET', `/admin/users/${target}`, token),
    ok: 200,
  },
  {
    name: 'PUT /admin/users/{id}',
    send: (app, token, target) =>
      adminCall(app, 'PUT', `/admin/users/${target}`, token, { status: 'disabled' }),
    ok: 200,
  },
  {
    name: 'POST /admin/users/{id}/revoke',
    send: (app, token, target) => adminCall(app, 'POST', `/admin/users/${target}/revoke`, token),
    ok: 200,
  },
  {
    name: 'POST /admin/users/{id}/mfa-reset',
    send: (app, token, target) => adminCall(app, 'POST', `/admin/users/${target}/mfa-reset`, token),
    ok: 200,
  },
  {
    name: 'DELETE /admin/users/{id}',
    send: (app, token, target) => adminCall(app, 'DELETE', `/admin/users/${target}`, token),
    ok: 204,
  },
  { name: 'GET /admin/audit', send: (app, token) => adminCall(app, 'GET', '/admin/audit', token), ok: 200 },
]

/**
 * docs/api.md §4.27 on every backend, ADMIN_REQUIRE_MFA off (the second factor has its own suite,
 * admin-second-factor.test.ts): who may use each endpoint, at each request, and what each does.
 */
describe.each(backends)('the admin API [$name]', (backend) => {
  let service: TestService
  const barrier = createBarrier(2)
  beforeAll(async () => {
    service = await startTestService(backend, {
      env: { ADMIN_REQUIRE_MFA: 'false' },
      // the writes of the last-admin rule (and the count a deletion checks first), held until both racing requests
      // reach them
      wrapStores: (stores) => heldAtAdminWrites(stores, barrier),
    })
  })
  afterAll(() => service?.close())

  const app = () => service.app
  const refresh = (user: Registered) =>
    call(app(), 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } })
  /** The trail's events of `userId`, newest first, once the sink has written what it holds. */
  const eventsOf = async (userId: string) => {
    await service.flushAudit()
    return service.stores.audit.page({ userId, limit: 100 })
  }

  it('R4.27.2 each endpoint: 401 without a token, 403 with a user’s, and done with an admin’s', async () => {
    const admin = await newAdmin(service)
    const user = await registerUser(service.app)
    for (const endpoint of ENDPOINTS) {
      const target = await registerUser(service.app)
      const without = await endpoint.send(app(), undefined, target.id)
      expectError(without, 401, MESSAGES.authorizationMissing)
      expect(without.headers['www-authenticate']).toBe('Bearer')
      expectError(await endpoint.send(app(), 'not-a-token', target.id), 401, MESSAGES.accessTokenInvalid)
      expectError(await endpoint.send(app(), user.accessToken, target.id), 403, ADMIN_MESSAGES.forbidden)
      // a user's refusal changed nothing
      expect(await service.stores.users.findById(target.id)).toMatchObject({ status: 'active' })
      const done = await endpoint.send(app(), admin.accessToken, target.id)
      expect(done.status, `${endpoint.name}: ${done.text}`).toBe(endpoint.ok)
      expect(done.headers['cache-control']).toBe('no-store')
    }
  })

  it('R4.27.2 the stored role decides, at each request: an admin demoted or disabled since is refused', async () => {
    const admin = await newAdmin(service)
    const target = await registerUser(service.app)
    for (const endpoint of ENDPOINTS.filter((each) => each.name.startsWith('GET')))
      expect((await endpoint.send(app(), admin.accessToken, target.id)).status).toBe(200)
    // demoted in the store, the session left as it is: the token's session is live, the role is not ADMIN_ROLE now
    expect(await service.stores.users.setRole(admin.id, 'user', new Date().toISOString())).toBe(true)
    for (const endpoint of ENDPOINTS)
      expectError(await endpoint.send(app(), admin.accessToken, target.id), 403, ADMIN_MESSAGES.forbidden)
    expect(await service.stores.users.findById(target.id)).not.toBeNull()
    // given it back: read again; then disabled in the store, sessions left: refused
    expect(await service.stores.users.setRole(admin.id, ADMIN_ROLE, new Date().toISOString())).toBe(true)
    expect((await adminCall(app(), 'GET', '/admin/users', admin.accessToken)).status).toBe(200)
    expect(await service.stores.users.setStatus(admin.id, 'disabled', new Date().toISOString())).toBe(true)
    for (const endpoint of ENDPOINTS)
      expectError(await endpoint.send(app(), admin.accessToken, target.id), 403, ADMIN_MESSAGES.forbidden)
  })

  it('R4.27.2 an admin logged out, demoted by the shell or deleted since is refused with 401: the session ended', async () => {
    const target = await registerUser(service.app)
    const loggedOut = await newAdmin(service)
    expect(
      (await call(app(), 'POST', '/auth/delete-refresh-token', { headers: bearer(loggedOut.accessToken) }))
        .status,
    ).toBe(200)
    const demoted = await newAdmin(service)
    const shell = userAdminOn(service.stores, service.config, systemClock)
    await shell.setRole(await shell.find({ id: demoted.id }), 'user')
    const deleted = await newAdmin(service)
    await shell.delete(await shell.find({ id: deleted.id }))
    for (const refused of [loggedOut, demoted, deleted]) {
      for (const endpoint of ENDPOINTS)
        expectError(
          await endpoint.send(app(), refused.accessToken, target.id),
          401,
          MESSAGES.accessTokenInvalid,
        )
    }
    // a user's ended session is a 401 too, not a 403: the session is checked first
    const user = await registerUser(service.app)
    await call(app(), 'POST', '/auth/delete-refresh-token', { headers: bearer(user.accessToken) })
    expectError(
      await adminCall(app(), 'GET', '/admin/users', user.accessToken),
      401,
      MESSAGES.accessTokenInvalid,
    )
  })

  it('R4.27.4 GET /admin/users/{id}: the account, its sessions and factors, its 20 latest events; 404 otherwise', async () => {
    const admin = await newAdmin(service)
    const target = await registerUser(service.app)
    // 25 events of its own beside those of its registration and login
    const start = Date.now() - 100_000
    await service.stores.audit.append(
      Array.from({ length: 25 }, (_, i) => ({
        at: start + i,
        type: 'login_failed' as const,
        userId: target.id,
        clientAddress: '198.51.100.7',
        requestId: `failed-${i}`,
        reason: 'wrong_password' as const,
      })),
    )
    await service.flushAudit()
    const shown = await adminCall(app(), 'GET', `/admin/users/${target.id}`, admin.accessToken)
    expect(shown.status, shown.text).toBe(200)
    const { data } = shown.body
    expect(data.user).toEqual({
      ...NEW_ACCOUNT_FIELDS,
      id: target.id,
      email: target.email,
      created_at: target.createdAt,
      updated_at: target.createdAt,
    })
    expect(data.sessions).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        created_at: expect.any(String),
        last_used_at: expect.any(String),
        expires_at: expect.any(String),
        // the User-Agent of app.inject
        device: 'lightMyRequest',
        client_address: '127.0.0.0/24',
        second_factor: false,
      },
    ])
    expect(data.factors).toEqual([])
    expect(data.events).toHaveLength(20)
    const all = await service.stores.audit.page({ userId: target.id, limit: 20 })
    expect(data.events.map((event: { id: string }) => event.id)).toEqual(all.map((event) => event.id))
    expect(data.events[0]).toEqual({
      id: all[0]?.id,
      kind: all[0]?.type,
      user_id: target.id,
      at: new Date(all[0]?.at ?? 0).toISOString(),
      ip: all[0]?.clientAddress,
      reason: all[0]?.reason,
      actor: null,
      request_id: all[0]?.requestId,
      omitted: null,
    })
    for (const id of ['1000000001', 'abc', '01234567890'])
      expectError(
        await adminCall(app(), 'GET', `/admin/users/${id}`, admin.accessToken),
        404,
        ADMIN_MESSAGES.userNotFound,
      )
  })

  it('R4.27.5 PUT: a role or a disable ends the sessions, an enable lets in again; each an event with the actor', async () => {
    const admin = await newAdmin(service)
    const target = await registerUser(service.app)
    const put = (body: unknown) =>
      adminCall(app(), 'PUT', `/admin/users/${target.id}`, admin.accessToken, body)
    const role = await put({ role: 'support' })
    expect(role.status, role.text).toBe(200)
    expect(role.body.data).toEqual({
      user: expect.objectContaining({ id: target.id, role: 'support', status: 'active' }),
      changed: true,
      sessions_ended: 1,
    })
    expectError(await refresh(target), 401, MESSAGES.refreshTokenInvalid)
    // unchanged: no write, no event
    expect((await put({ role: 'support' })).body.data).toMatchObject({ changed: false, sessions_ended: 0 })
    // the new role is in the tokens of the next login
    const again = await call(app(), 'POST', '/auth/login', {
      body: { email: target.email, password: PASSWORD },
    })
    expect(again.body.data.role).toBe('support')
    const disabled = await put({ status: 'disabled' })
    expect(disabled.body.data).toMatchObject({
      user: { status: 'disabled' },
      changed: true,
      sessions_ended: 1,
    })
    expectError(
      await call(app(), 'POST', '/auth/refresh', { body: { refresh_token: again.body.data.refresh_token } }),
      401,
      MESSAGES.refreshTokenInvalid,
    )
    expectError(
      await call(app(), 'POST', '/auth/login', { body: { email: target.email, password: PASSWORD } }),
      401,
      MESSAGES.invalidCredentials,
    )
    // both at once: the role first, then the status
    const both = await put({ role: 'user', status: 'active' })
    expect(both.body.data).toMatchObject({ user: { role: 'user', status: 'active' }, changed: true })
    expect(
      (await call(app(), 'POST', '/auth/login', { body: { email: target.email, password: PASSWORD } }))
        .status,
    ).toBe(200)
    const events = await eventsOf(target.id)
    const acts = events.filter((event) => event.reason === 'admin')
    expect(acts.map((event) => event.type)).toEqual([
      'account_enabled',
      'role_changed',
      'account_disabled',
      'role_changed',
    ])
    for (const act of acts)
      expect(act).toMatchObject({
        actor: admin.id,
        clientAddress: '127.0.0.1',
        requestId: expect.any(String),
      })
    // refused bodies change nothing
    const invalid = async (body: unknown, field: string, problem: string) => {
      const reply = await put(body)
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.data.errors).toEqual([{ field, message: problem }])
    }
    await invalid({}, '', 'at least one of role and status is required')
    await invalid(
      { role: 'Admin!' },
      '/role',
      'must be 1 to 32 of the characters a-z 0-9 _ - starting with a letter',
    )
    await invalid({ status: 'gone' }, '/status', 'must be equal to one of the allowed values')
    await invalid({ role: 7 }, '/role', 'must be a string')
    expect(await service.stores.users.findById(target.id)).toMatchObject({ role: 'user', status: 'active' })
    expectError(
      await adminCall(app(), 'PUT', '/admin/users/1000000001', admin.accessToken, { status: 'active' }),
      404,
      ADMIN_MESSAGES.userNotFound,
    )
  })

  it('R4.27.5 revoke, mfa-reset and delete do what tessera users does, recorded with the actor', async () => {
    const admin = await newAdmin(service)
    const target = await registerUser(service.app)
    const revoked = await adminCall(app(), 'POST', `/admin/users/${target.id}/revoke`, admin.accessToken)
    expect(revoked.body).toEqual({ code: 200, message: 'Success', data: { sessions_ended: 1 } })
    expectError(await refresh(target), 401, MESSAGES.refreshTokenInvalid)
    const reset = await adminCall(app(), 'POST', `/admin/users/${target.id}/mfa-reset`, admin.accessToken)
    expect(reset.body.data).toEqual({ factors_removed: 0, sessions_ended: 0 })
    // the events written (the sink writes within 100 ms), so that the deletion finds their addresses to erase
    await service.flushAudit()
    const deleted = await adminCall(app(), 'DELETE', `/admin/users/${target.id}`, admin.accessToken)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe('')
    expect(await service.stores.users.findById(target.id)).toBeNull()
    expectError(
      await adminCall(app(), 'GET', `/admin/users/${target.id}`, admin.accessToken),
      404,
      ADMIN_MESSAGES.userNotFound,
    )
    expectError(
      await adminCall(app(), 'DELETE', `/admin/users/${target.id}`, admin.accessToken),
      404,
      ADMIN_MESSAGES.userNotFound,
    )
    expectError(
      await adminCall(app(), 'POST', `/admin/users/${target.id}/revoke`, admin.accessToken),
      404,
      ADMIN_MESSAGES.userNotFound,
    )
    const acts = (await eventsOf(target.id)).filter((event) => event.reason === 'admin')
    expect(acts.map((event) => [event.type, event.actor])).toEqual([
      ['account_deleted', admin.id],
      ['mfa_disabled', admin.id],
      ['sessions_revoked', admin.id],
    ])
    // the deletion erased the addresses of the account's earlier events (R6.3.6), not of the deletion's own
    expect(
      (await eventsOf(target.id)).filter((event) => event.type === 'registered')[0]?.clientAddress,
    ).toBeNull()
  })

  it('R4.27.6 an admin cannot demote, disable or delete themself; revoking their own sessions is allowed', async () => {
    const admin = await newAdmin(service)
    await newAdmin(service)
    const self = `/admin/users/${admin.id}`
    for (const body of [{ role: 'user' }, { status: 'disabled' }, { role: 'user', status: 'disabled' }])
      expectError(await adminCall(app(), 'PUT', self, admin.accessToken, body), 409, ADMIN_MESSAGES.self)
    expectError(await adminCall(app(), 'DELETE', self, admin.accessToken), 409, ADMIN_MESSAGES.self)
    expect(await service.stores.users.findById(admin.id)).toMatchObject({
      role: ADMIN_ROLE,
      status: 'active',
    })
    // what changes nothing of the role or the status is no demotion
    const same = await adminCall(app(), 'PUT', self, admin.accessToken, {
      role: ADMIN_ROLE,
      status: 'active',
    })
    expect(same.body.data).toMatchObject({ changed: false })
    expect((await adminCall(app(), 'POST', `${self}/revoke`, admin.accessToken)).body.data).toEqual({
      sessions_ended: 1,
    })
    expectError(
      await adminCall(app(), 'GET', '/admin/users', admin.accessToken),
      401,
      MESSAGES.accessTokenInvalid,
    )
  })

  it('R4.27.7 two admins demoting each other at once: one succeeds, the other is 409, one admin remains', async () => {
    for (const kind of ['role', 'status', 'delete'] as const) {
      // a deployment whose only admins are these two: the ones of the earlier tests lose the role
      for (const other of await service.stores.users.list({ limit: 1000 }))
        if (other.role === ADMIN_ROLE)
          await service.stores.users.setRole(other.id, 'user', new Date().toISOString())
      const first = await newAdmin(service)
      const second = await newAdmin(service)
      const takeAway = (by: Registered, target: Registered) =>
        kind === 'delete'
          ? adminCall(app(), 'DELETE', `/admin/users/${target.id}`, by.accessToken)
          : adminCall(
              app(),
              'PUT',
              `/admin/users/${target.id}`,
              by.accessToken,
              kind === 'role' ? { role: 'user' } : { status: 'disabled' },
            )
      // both past the admin check, the two requests wait for each other at the store: at the write of a role or a
      // status, at the count a deletion checks before it ends the sessions
      barrier.arm()
      const replies = await Promise.all([takeAway(first, second), takeAway(second, first)])
      const statuses = replies.map((reply) => reply.status).sort()
      expect(statuses, `${kind}: ${replies.map((reply) => reply.text).join(' ')}`).toEqual(
        kind === 'delete' ? [204, 409] : [200, 409],
      )
      const refused = replies.find((reply) => reply.status === 409) as Reply
      expectError(refused, 409, ADMIN_MESSAGES.lastAdmin)
      expect(await service.stores.users.countActive(ADMIN_ROLE)).toBe(1)
    }
  })

  it('R4.27.8 the shell is not held to the last-admin rule', async () => {
    for (const other of await service.stores.users.list({ limit: 1000 }))
      if (other.role === ADMIN_ROLE)
        await service.stores.users.setRole(other.id, 'user', new Date().toISOString())
    const last = await newAdmin(service)
    // the login's event written before the shell's: the shell writes to the store at once, the service's sink a
    // moment later, and in one millisecond the trail orders by the order of writing
    await service.flushAudit()
    const shell = userAdminOn(service.stores, service.config, systemClock)
    expect((await shell.disable(await shell.find({ id: last.id }))).changed).toBe(true)
    expect(await shell.activeAdmins()).toBe(0)
    const events = await eventsOf(last.id)
    expect(events[0]).toMatchObject({ type: 'account_disabled', reason: 'operator' })
    expect(events[0]).not.toHaveProperty('actor')
  })
})
