import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { bearer, decodeJwt, PASSWORD, type Reply, uniqueEmail } from '../support/http.js'
import { codeIn } from '../support/mailbox.js'
import { runCli } from '../support/process.js'
import { type Event, type EventService, expectNoSecrets, sorted, startEventService } from './event-service.js'
import { SECRET } from './webhook-harness.js'

// docs/api.md R6.5.12: a session.ended event for each session that ends, with its reason, and the
// user.password_changed of each way a password changes; on every backend, each delivery verified by the
// standardwebhooks package at a real receiver.

const NEW_PASSWORD = 'a new password, long enough'

describe.each(backends)('session.ended and user.password_changed [$name]', (backend) => {
  let h: EventService
  const secrets: string[] = [PASSWORD, NEW_PASSWORD]

  beforeAll(async () => {
    // a session per device, so that a user has several to end; a rotated token that comes back ends its session
    h = await startEventService(backend, {
      AUTH_SESSIONS: 'per-device',
      AUTH_REFRESH_REUSE_ENDS_SESSION: 'true',
    })
  })
  afterAll(() => h?.close())

  const ok = (reply: Reply) => {
    expect(reply.status, reply.text).toBe(200)
    return reply.body.data
  }
  interface Signed {
    token: string
    refresh: string
    /** The session's id: the access token's `sid`. */
    session: string
  }
  const signed = (data: any): Signed => {
    secrets.push(data.access_token, data.refresh_token)
    return {
      token: data.access_token,
      refresh: data.refresh_token,
      session: decodeJwt(data.access_token).claims.sid,
    }
  }
  /** A new account with `sessions` sessions (its registration's first); verified with a code when asked. */
  const account = async (sessions: number, verified = false) => {
    const email = uniqueEmail()
    let code: string | undefined
    if (verified) {
      ok(await h.call('POST', '/auth/email/send-code', { body: { email, purpose: 'register' } }))
      code = codeIn(await h.mailbox.next(email)) ?? undefined
      if (code !== undefined) secrets.push(code)
    }
    const registered = ok(
      await h.call('POST', '/auth/register', {
        body: { email, password: PASSWORD, ...(code === undefined ? {} : { verification_code: code }) },
      }),
    )
    const all = [signed(registered)]
    while (all.length < sessions)
      all.push(signed(ok(await h.call('POST', '/auth/login', { body: { email, password: PASSWORD } }))))
    return { email, id: registered.id as string, sessions: all }
  }
  /** The events of `userId` but its user.created. */
  const laterEvents = async (userId: string) =>
    (await h.eventsOf(userId)).filter((event) => event.type !== 'user.created')
  const ended = (userId: string, sessions: readonly Signed[], reason: string): Event[] =>
    sessions.map((session) => ({
      type: 'session.ended',
      data: { user_id: userId, session_id: session.session, reason },
    }))

  it('R6.5.12 a logout of the session itself, of the others, of all; a session removed from the list', async () => {
    const user = await account(6)
    const [a, b, c, d, e, f] = user.sessions as [Signed, Signed, Signed, Signed, Signed, Signed]
    ok(await h.call('POST', '/auth/delete-refresh-token', { headers: bearer(a.token) }))
    expect(await laterEvents(user.id)).toEqual(sorted(ended(user.id, [a], 'logout')))

    ok(await h.call('DELETE', `/auth/sessions/${c.session}`, { headers: bearer(b.token) }))
    // a session already ended: nothing ended, nothing sent
    expect((await h.call('DELETE', `/auth/sessions/${c.session}`, { headers: bearer(b.token) })).status).toBe(
      404,
    )
    const expected = [...ended(user.id, [a], 'logout'), ...ended(user.id, [c], 'removed')]
    expect(await laterEvents(user.id)).toEqual(sorted(expected))

    ok(
      await h.call('POST', '/auth/delete-refresh-token', {
        headers: bearer(b.token),
        query: { scope: 'others' },
      }),
    )
    expected.push(...ended(user.id, [d, e, f], 'logout_others'))
    expect(await laterEvents(user.id)).toEqual(sorted(expected))

    const g = signed(
      ok(await h.call('POST', '/auth/login', { body: { email: user.email, password: PASSWORD } })),
    )
    ok(
      await h.call('POST', '/auth/delete-refresh-token', {
        headers: bearer(g.token),
        query: { scope: 'all' },
      }),
    )
    expected.push(...ended(user.id, [b, g], 'logout_all'))
    expect(await laterEvents(user.id)).toEqual(sorted(expected))
  })

  it('R6.5.12 a password change ends the other sessions; user.password_changed says changed', async () => {
    const user = await account(3)
    const [a] = user.sessions as [Signed]
    const changed = signed(
      ok(
        await h.call('POST', '/auth/password/change', {
          headers: bearer(a.token),
          body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
        }),
      ),
    )
    expect(user.sessions.map((session) => session.session)).not.toContain(changed.session)
    expect(await laterEvents(user.id)).toEqual(
      sorted([
        { type: 'user.password_changed', data: { user_id: user.id, reason: 'changed' } },
        ...ended(user.id, user.sessions, 'password_changed'),
      ]),
    )
  })

  it('R6.5.12 a reset with a code ends every session; user.password_changed says reset', async () => {
    const user = await account(2, true)
    ok(
      await h.call('POST', '/auth/email/send-code', {
        body: { email: user.email, purpose: 'reset_password' },
      }),
    )
    const code = codeIn(await h.mailbox.next(user.email)) as string
    secrets.push(code)
    const reset = signed(
      ok(
        await h.call('POST', '/auth/password/reset', {
          body: { email: user.email, verification_code: code, new_password: NEW_PASSWORD },
        }),
      ),
    )
    expect(user.sessions.map((session) => session.session)).not.toContain(reset.session)
    expect(await laterEvents(user.id)).toEqual(
      sorted([
        { type: 'user.password_changed', data: { user_id: user.id, reason: 'reset' } },
        ...ended(user.id, user.sessions, 'password_reset'),
      ]),
    )
  })

  it('R6.5.12 by the operator or an admin: a revocation, a password reset, a disable', async () => {
    const admin = await h.admin()
    const revoked = await account(2)
    expect(await admin.revoke(await admin.find({ id: revoked.id }))).toBe(2)
    expect(await laterEvents(revoked.id)).toEqual(sorted(ended(revoked.id, revoked.sessions, 'revoked')))

    const reset = await account(2)
    await admin.resetPassword(
      await admin.find({ id: reset.id }),
      '$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$aGFzaA',
    )
    expect(await laterEvents(reset.id)).toEqual(
      sorted([
        { type: 'user.password_changed', data: { user_id: reset.id, reason: 'operator' } },
        ...ended(reset.id, reset.sessions, 'password_reset'),
      ]),
    )

    const disabled = await account(2)
    await admin.disable(await admin.find({ id: disabled.id }))
    const events = await laterEvents(disabled.id)
    expect(events.filter((event) => event.type === 'session.ended')).toEqual(
      sorted(ended(disabled.id, disabled.sessions, 'disabled')),
    )
    expect(events.filter((event) => event.type !== 'session.ended')).toEqual([
      {
        type: 'user.updated',
        data: { user: expect.objectContaining({ status: 'disabled' }), changes: ['status'] },
      },
    ])
  })

  it('R6.5.12 reuse detection: a rotated refresh token that comes back ends its session', async () => {
    const user = await account(2)
    const [a, b] = user.sessions as [Signed, Signed]
    const rotated = ok(await h.call('POST', '/auth/refresh', { body: { refresh_token: a.refresh } }))
    secrets.push(rotated.access_token, rotated.refresh_token)
    // a refresh that succeeds sends nothing
    expect(await laterEvents(user.id)).toEqual([])
    expect((await h.call('POST', '/auth/refresh', { body: { refresh_token: a.refresh } })).status).toBe(401)
    expect(await laterEvents(user.id)).toEqual(sorted(ended(user.id, [a], 'reuse_detected')))
    // the other session lives on
    ok(await h.call('POST', '/auth/refresh', { body: { refresh_token: b.refresh } }))
    expect(await laterEvents(user.id)).toEqual(sorted(ended(user.id, [a], 'reuse_detected')))
  })

  it.runIf(backend === backends[0])(
    'R6.5.9 tessera users queues the events of its acts for the running service to deliver',
    async () => {
      const user = await account(1)
      const env = { ...h.instance.env, WEBHOOK_URLS: h.receiver.url, WEBHOOK_SECRET: SECRET }
      const reset = await runCli(['users', 'reset-password', user.id], env, `${NEW_PASSWORD}\n`)
      expect(reset.code, reset.stderr).toBe(0)
      expect(await laterEvents(user.id)).toEqual(
        sorted([
          { type: 'user.password_changed', data: { user_id: user.id, reason: 'operator' } },
          ...ended(user.id, user.sessions, 'password_reset'),
        ]),
      )
      const role = await runCli(['users', 'set-role', user.id, 'editor'], env)
      expect(role.code, role.stderr).toBe(0)
      expect((await laterEvents(user.id)).filter((event) => event.type === 'user.updated')).toEqual([
        {
          type: 'user.updated',
          data: { user: expect.objectContaining({ role: 'editor' }), changes: ['role'] },
        },
      ])
    },
    60_000,
  )

  it('R6.5.1 no body carries a password, a hash, a token or a code', async () => {
    expectNoSecrets(
      (await h.settled()).map((event) => event.body),
      [...secrets, '$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$aGFzaA'],
    )
  })
})
