import { randomBytes } from 'node:crypto'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { bearer, PASSWORD, type Reply, uniqueEmail } from '../support/http.js'
import { codeIn } from '../support/mailbox.js'
import { apiPath } from '../support/test-service.js'
import { type Event, type EventService, expectNoSecrets, sorted, startEventService } from './event-service.js'

// docs/api.md R6.5.9 to R6.5.11: the user.* events of every change of an account, emitted by the real service on
// every backend, posted to a real receiver on 127.0.0.1 and checked there with the standardwebhooks verifier; each
// account's events compared whole (type, data, and for user.updated the account as GET /auth/me answers it then and
// the names of what changed).

/** A multipart/form-data body with the one file `avatar`. */
function avatarForm(image: Buffer) {
  const boundary = `----tessera${randomBytes(8).toString('hex')}`
  return {
    payload: Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="avatar"; filename="me.png"\r\nContent-Type: image/png\r\n\r\n`,
      ),
      image,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  }
}

describe.each(backends)('the user.* webhook events [$name]', (backend) => {
  let h: EventService
  /** Every password, token and code the tests used: no body may carry one. */
  const secrets: string[] = [PASSWORD]

  beforeAll(async () => {
    h = await startEventService(backend, { AUTH_SESSIONS: 'per-device' })
  })
  afterAll(() => h?.close())

  const ok = (reply: Reply) => {
    expect(reply.status, reply.text).toBe(200)
    return reply.body.data
  }
  /** The code of the next mail to `email`. */
  const mailedCode = async (email: string) => {
    const code = codeIn(await h.mailbox.next(email))
    if (code === null) throw new Error(`no code mailed to ${email}`)
    secrets.push(code)
    return code
  }
  const register = async (email = uniqueEmail(), verificationCode?: string) => {
    const data = ok(
      await h.call('POST', '/auth/register', {
        body: {
          email,
          password: PASSWORD,
          ...(verificationCode ? { verification_code: verificationCode } : {}),
        },
      }),
    )
    secrets.push(data.access_token, data.refresh_token)
    return { email, id: data.id as string, token: data.access_token as string }
  }
  /** The account's address changed to `newEmail`, proved with the code sent there. */
  const changeEmail = async (token: string, newEmail: string) => {
    ok(
      await h.call('POST', '/auth/me/send-code', {
        headers: bearer(token),
        body: { purpose: 'change_email', new_email: newEmail },
      }),
    )
    const code = await mailedCode(newEmail)
    ok(
      await h.call('POST', '/auth/email/change', {
        headers: bearer(token),
        body: { new_email: newEmail, verification_code: code },
      }),
    )
  }
  /** The events expected so far for one account, as `user.updated` events with the account read now. */
  const updated = async (token: string, changes: string[]): Promise<Event> => ({
    type: 'user.updated',
    data: { user: await h.me(token), changes },
  })

  it('R6.5.9 user.created for a registration with a password, and with a code (its address verified)', async () => {
    const plain = await register()
    const plainAccount = await h.me(plain.token)
    expect(plainAccount).toMatchObject({ email_verified: false, password_set: true })
    expect(await h.eventsOf(plain.id)).toEqual([{ type: 'user.created', data: { user: plainAccount } }])

    const email = uniqueEmail()
    ok(await h.call('POST', '/auth/email/send-code', { body: { email, purpose: 'register' } }))
    const coded = await register(email, await mailedCode(email))
    const codedAccount = await h.me(coded.token)
    expect(codedAccount).toMatchObject({ email_verified: true })
    expect(await h.eventsOf(coded.id)).toEqual([{ type: 'user.created', data: { user: codedAccount } }])
  })

  it('R6.5.10 user.updated for the verification, the e-mail, the profile and the avatar, each naming what changed', async () => {
    const user = await register()
    const expected: Event[] = [{ type: 'user.created', data: { user: await h.me(user.token) } }]

    // the address verified by its owner, signed in
    ok(
      await h.call('POST', '/auth/me/send-code', {
        headers: bearer(user.token),
        body: { purpose: 'verify_email' },
      }),
    )
    const verifyCode = await mailedCode(user.email)
    ok(
      await h.call('POST', '/auth/email/verify', {
        headers: bearer(user.token),
        body: { verification_code: verifyCode },
      }),
    )
    expected.push(await updated(user.token, ['verification']))
    expect(await h.eventsOf(user.id)).toEqual(sorted(expected))

    // a new address, proved with a code sent there
    const newEmail = uniqueEmail()
    await changeEmail(user.token, newEmail)
    expected.push(await updated(user.token, ['email']))
    expect(await h.eventsOf(user.id)).toEqual(sorted(expected))

    // the profile; the same profile again changes nothing, and sends nothing
    const profile = { username: `u${randomBytes(6).toString('hex')}`, nickname: 'Ada', bio: 'Counts.' }
    ok(await h.call('PUT', '/auth/profile', { headers: bearer(user.token), body: profile }))
    expected.push(await updated(user.token, ['profile']))
    ok(await h.call('PUT', '/auth/profile', { headers: bearer(user.token), body: profile }))
    expect(await h.eventsOf(user.id)).toEqual(sorted(expected))

    // the avatar, uploaded then removed; removing none sends nothing
    const image = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#c03020' } })
      .png()
      .toBuffer()
    const form = avatarForm(image)
    const uploaded = await h.service.app.inject({
      method: 'POST',
      url: '/auth/avatar',
      payload: form.payload,
      headers: { ...form.headers, ...bearer(user.token) },
    })
    expect(uploaded.statusCode, uploaded.body).toBe(200)
    const withAvatar = await updated(user.token, ['avatar'])
    expect((withAvatar.data as any).user.avatar_url).toMatch(
      new RegExp(`^${apiPath('/avatars/')}[0-9a-f]{32}$`),
    )
    expected.push(withAvatar)
    ok(await h.call('DELETE', '/auth/avatar', { headers: bearer(user.token) }))
    const withoutAvatar = await updated(user.token, ['avatar'])
    expect((withoutAvatar.data as any).user.avatar_url).toBeNull()
    expected.push(withoutAvatar)
    ok(await h.call('DELETE', '/auth/avatar', { headers: bearer(user.token) }))
    expect(await h.eventsOf(user.id)).toEqual(sorted(expected))
  })

  it("R6.5.10 an unverified account's new address: user.updated names the e-mail and the verification", async () => {
    const user = await register()
    const created: Event = { type: 'user.created', data: { user: await h.me(user.token) } }
    const newEmail = uniqueEmail()
    await changeEmail(user.token, newEmail)
    expect(await h.eventsOf(user.id)).toEqual(
      sorted([created, await updated(user.token, ['email', 'verification'])]),
    )
  })

  it('R6.5.10 role and status by tessera users and the admin API: user.updated names the role, then the status', async () => {
    const user = await register()
    const created: Event = { type: 'user.created', data: { user: await h.me(user.token) } }
    const admin = await h.admin()
    const [sessionId] = (await h.stores.sessions.list(user.id, Date.now())).map((session) => session.id)
    const found = await admin.find({ id: user.id })

    const role = await admin.setRole(found, 'editor')
    const roleChanged: Event = {
      type: 'user.updated',
      data: {
        user: expect.objectContaining({ id: user.id, role: 'editor', status: 'active' }),
        changes: ['role'],
      },
    }
    const disabled = await admin.disable(role.user)
    const statusChanged = (status: string): Event => ({
      type: 'user.updated',
      data: { user: expect.objectContaining({ id: user.id, role: 'editor', status }), changes: ['status'] },
    })
    // already disabled: nothing changed, nothing sent
    await admin.disable(disabled.user)
    await admin.enable(disabled.user)
    const events = await h.eventsOf(user.id)
    const sessionEnded: Event = {
      type: 'session.ended',
      data: { user_id: user.id, session_id: sessionId, reason: 'role_changed' },
    }
    expect(events).toEqual(
      expect.arrayContaining([
        created,
        roleChanged,
        statusChanged('disabled'),
        statusChanged('active'),
        sessionEnded,
      ]),
    )
    expect(events).toHaveLength(5)
    // each account as it was read after its change: the times tell them apart
    const updates = events
      .filter((event) => event.type === 'user.updated')
      .map((event) => (event.data as any).user)
    for (const account of updates)
      expect(Object.keys(account)).toEqual(Object.keys((created.data as any).user))
    expect((await h.stores.users.findById(user.id))?.status).toBe('active')
  })

  it('R6.5.10 the proof of an unverified address by another: the verification, the password and the sessions end', async () => {
    const user = await register()
    const created: Event = { type: 'user.created', data: { user: await h.me(user.token) } }
    const sessions = (await h.stores.sessions.list(user.id, Date.now())).map((session) => session.id)
    expect(sessions).toHaveLength(1)
    ok(await h.call('POST', '/auth/email/send-code', { body: { email: user.email, purpose: 'login' } }))
    const code = await mailedCode(user.email)
    const signedIn = ok(
      await h.call('POST', '/auth/login/email-code', {
        body: { email: user.email, verification_code: code },
      }),
    )
    secrets.push(signedIn.access_token, signedIn.refresh_token)
    expect(await h.eventsOf(user.id)).toEqual(
      sorted([
        created,
        await updated(signedIn.access_token, ['verification']),
        { type: 'user.password_changed', data: { user_id: user.id, reason: 'claimed' } },
        ...sessions.map((id) => ({
          type: 'session.ended',
          data: { user_id: user.id, session_id: id, reason: 'address_claimed' },
        })),
      ]),
    )
    expect(await h.me(signedIn.access_token)).toMatchObject({ email_verified: true, password_set: false })
  })

  it('R6.5.9 user.deleted, with the id and the address, for a deletion by its owner and by the operator', async () => {
    const owner = await register()
    const ownerCreated: Event = { type: 'user.created', data: { user: await h.me(owner.token) } }
    ok(await h.call('POST', '/auth/delete', { headers: bearer(owner.token), body: { password: PASSWORD } }))
    expect(await h.eventsOf(owner.id)).toEqual(
      sorted([ownerCreated, { type: 'user.deleted', data: { user: { id: owner.id, email: owner.email } } }]),
    )

    const other = await register()
    const otherCreated: Event = { type: 'user.created', data: { user: await h.me(other.token) } }
    const admin = await h.admin()
    await admin.delete(await admin.find({ id: other.id }))
    expect(await h.eventsOf(other.id)).toEqual(
      sorted([otherCreated, { type: 'user.deleted', data: { user: { id: other.id, email: other.email } } }]),
    )
  })

  it('R6.5.1 no body carries a password, a hash, a token or a code', async () => {
    expectNoSecrets(
      (await h.settled()).map((event) => event.body),
      secrets,
    )
  })
})
