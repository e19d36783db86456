import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminCall, newAdmin } from '../admin/admin-harness.js'
import { backends } from '../support/backends.js'
import { decodeJwt, PASSWORD, type Reply, registerUser } from '../support/http.js'
import { type Event, type EventService, startEventService } from './event-service.js'

// docs/api.md R6.5.9 to R6.5.12 through the admin API (§4.27): its acts go through the user admin that `tessera
// users` uses, and send the same events; on every backend, each delivery verified by the standardwebhooks package at a
// real receiver.

describe.each(backends)('the webhook events of the admin API [$name]', (backend) => {
  let h: EventService

  beforeAll(async () => {
    h = await startEventService(backend, { AUTH_SESSIONS: 'per-device', ADMIN_REQUIRE_MFA: 'false' })
  })
  afterAll(() => h?.close())

  const ok = (reply: Reply) => {
    expect(reply.status, reply.text).toBe(200)
    return reply.body.data
  }
  const login = async (email: string) => {
    const data = ok(await h.call('POST', '/auth/login', { body: { email, password: PASSWORD } }))
    return decodeJwt(data.access_token).claims.sid as string
  }
  /** An admin act answered: 200 with the account, or 204. */
  const done = (reply: Reply) => expect([200, 204], reply.text).toContain(reply.status)
  const ended = (userId: string, sessionIds: readonly string[], reason: string): Event[] =>
    sessionIds.map((sessionId) => ({
      type: 'session.ended',
      data: { user_id: userId, session_id: sessionId, reason },
    }))
  /** The ids of the user's sessions now. */
  const sessionsOf = async (userId: string) =>
    (await h.stores.sessions.list(userId, Date.now())).map((session) => session.id)
  const updated = (userId: string, changes: string[], fields: Record<string, string>): Event => ({
    type: 'user.updated',
    data: { user: expect.objectContaining({ id: userId, ...fields }), changes },
  })

  it('R6.5.10, R6.5.12 role, status, revocation, mfa-reset and deletion by an admin', async () => {
    const admin = await newAdmin(h.service)
    const user = await registerUser(h.service.app)
    // its registration's session and its login's
    const first = await sessionsOf(user.id)
    expect(first).toHaveLength(2)
    const later = async () => (await h.eventsOf(user.id)).filter((event) => event.type !== 'user.created')
    /** The events so far are those expected, each once. */
    const expectEvents = async (expected: readonly Event[]) => {
      const events = await later()
      expect(events).toEqual(expect.arrayContaining([...expected]))
      expect(events).toHaveLength(expected.length)
    }
    const act = (method: string, path: string, body?: unknown) =>
      adminCall(h.service.app, method, `/admin/users/${user.id}${path}`, admin.accessToken, body)

    done(await act('PUT', '', { role: 'editor' }))
    const expected = [
      updated(user.id, ['role'], { role: 'editor' }),
      ...ended(user.id, first, 'role_changed'),
    ]
    await expectEvents(expected)

    const second = [await login(user.email)]
    done(await act('PUT', '', { status: 'disabled' }))
    done(await act('PUT', '', { status: 'active' }))
    expected.push(
      updated(user.id, ['status'], { status: 'disabled' }),
      ...ended(user.id, second, 'disabled'),
      updated(user.id, ['status'], { status: 'active' }),
    )
    await expectEvents(expected)

    const third = [await login(user.email)]
    done(await act('POST', '/revoke'))
    expected.push(...ended(user.id, third, 'revoked'))
    const fourth = [await login(user.email)]
    // no factor to remove: its sessions end, and no user.mfa_changed
    done(await act('POST', '/mfa-reset'))
    expected.push(...ended(user.id, fourth, 'mfa_changed'))
    await expectEvents(expected)

    done(await act('DELETE', ''))
    expected.push({ type: 'user.deleted', data: { user: { id: user.id, email: user.email } } })
    await expectEvents(expected)
  })
})
