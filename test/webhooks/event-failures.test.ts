import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OperationFailedError } from '../../src/errors.js'
import { adminCall, newAdmin } from '../admin/admin-harness.js'
import { backends } from '../support/backends.js'
import { withInjectedFailures } from '../support/failing-stores.js'
import { bearer, decodeJwt, PASSWORD, type Reply, uniqueEmail } from '../support/http.js'
import { type EventService, startEventService } from './event-service.js'

// docs/api.md R6.5.2, R7.3: a change whose webhook event cannot be queued (the outbox fails) is answered 503
// write_outcome_unknown with Retry-After: 1, not 200: the change was made, its event may not have been. The service
// keeps serving, and once the outbox answers again the same changes answer 200 with their events; on every backend.

/** docs/api.md §7: the text of R7.3's 503. */
const WRITE_OUTCOME_UNKNOWN = 'The change may or may not have been applied; retry'

describe.each(backends)('a webhook event that cannot be queued [$name]', (backend) => {
  let h: EventService
  let failing = false

  beforeAll(async () => {
    h = await startEventService(
      backend,
      { AUTH_SESSIONS: 'per-device', AUTH_REFRESH_REUSE_ENDS_SESSION: 'true', ADMIN_REQUIRE_MFA: 'false' },
      (stores) => withInjectedFailures(stores, () => failing, { stores: ['outbox'], writes: ['enqueueAll'] }),
    )
  })
  afterAll(() => h?.close())

  const ok = (reply: Reply) => {
    expect(reply.status, reply.text).toBe(200)
    return reply.body.data
  }
  const expectUnknown = (reply: Reply) => {
    expect(reply.status, reply.text).toBe(503)
    expect(reply.headers['retry-after']).toBe('1')
    expect(reply.body).toEqual({ code: 503, message: WRITE_OUTCOME_UNKNOWN, data: null })
  }
  /** An account with `count` sessions: their tokens. */
  const account = async (count: number) => {
    const email = uniqueEmail()
    const first = ok(await h.call('POST', '/auth/register', { body: { email, password: PASSWORD } }))
    const sessions = [first]
    while (sessions.length < count)
      sessions.push(ok(await h.call('POST', '/auth/login', { body: { email, password: PASSWORD } })))
    return { email, id: first.id as string, sessions }
  }
  /** Whether the session of `accessToken` is still there. */
  const lives = async (userId: string, accessToken: string) =>
    (await h.stores.sessions.list(userId, Date.now())).some(
      (session) => session.id === decodeJwt(accessToken).claims.sid,
    )

  it('R7.3 each change answers 503 write_outcome_unknown, made all the same; the service keeps serving', async () => {
    const user = await account(3)
    const [a, c, e] = user.sessions
    const revoked = await account(1)
    const other = await account(1)
    const [otherSession] = other.sessions
    const admin = await h.admin()
    const promoted = await account(1)
    const apiAdmin = await newAdmin(h.service)
    failing = true
    try {
      expectUnknown(
        await h.call('PUT', '/auth/profile', {
          headers: bearer(a.access_token),
          body: { nickname: 'Failing' },
        }),
      )
      expect(await h.me(a.access_token)).toMatchObject({ nickname: 'Failing' })

      expectUnknown(
        await h.call('DELETE', `/auth/sessions/${decodeJwt(e.access_token).claims.sid}`, {
          headers: bearer(a.access_token),
        }),
      )
      expect(await lives(user.id, e.access_token)).toBe(false)

      expectUnknown(
        await h.call('POST', '/auth/delete-refresh-token', {
          headers: bearer(c.access_token),
          query: { scope: 'others' },
        }),
      )
      expect(await lives(user.id, a.access_token)).toBe(false)
      expect(await lives(user.id, c.access_token)).toBe(true)

      // a rotated token that comes back: its session ends, and the refusal is the 503, not the 401
      const rotated = ok(await h.call('POST', '/auth/refresh', { body: { refresh_token: c.refresh_token } }))
      expectUnknown(await h.call('POST', '/auth/refresh', { body: { refresh_token: c.refresh_token } }))
      expect(await lives(user.id, rotated.access_token)).toBe(false)

      // the operator's act fails with what was done and what was not
      const failure = await admin
        .revoke(await admin.find({ id: revoked.id }))
        .catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(OperationFailedError)
      expect((failure as Error).message).toMatch(
        /^the sessions were ended, but its webhook events were not queued: /,
      )
      expect(await h.stores.sessions.list(revoked.id, Date.now())).toEqual([])
      // and an admin's, through the admin API, is the 503
      expectUnknown(
        await adminCall(h.service.app, 'PUT', `/admin/users/${promoted.id}`, apiAdmin.accessToken, {
          role: 'editor',
        }),
      )
      expect((await h.stores.users.findById(promoted.id))?.role).toBe('editor')

      // what queues no event is served as before
      ok(await h.call('GET', '/auth/me', { headers: bearer(otherSession.access_token) }))
      ok(await h.call('GET', '/health'))
    } finally {
      failing = false
    }

    // the outbox answers again: the same changes answer 200, their events arrive
    ok(
      await h.call('PUT', '/auth/profile', {
        headers: bearer(otherSession.access_token),
        body: { nickname: 'Back' },
      }),
    )
    expect(await h.eventsOf(user.id)).not.toContainEqual(expect.objectContaining({ type: 'user.updated' }))
    const events = await h.eventsOf(other.id)
    expect(events).toContainEqual({
      type: 'user.updated',
      data: { user: expect.objectContaining({ nickname: 'Back' }), changes: ['profile'] },
    })
  })
})
