import { randomBytes } from 'node:crypto'
import { authenticator } from 'otplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { bearer, decodeJwt, PASSWORD, type Reply, uniqueEmail } from '../support/http.js'
import { codeIn } from '../support/mailbox.js'
import { SoftwareAuthenticator } from '../support/software-authenticator.js'
import { type Event, type EventService, expectNoSecrets, sorted, startEventService } from './event-service.js'

// docs/api.md R6.5.11: user.mfa_changed, with the kinds of factor the account has now, for each change of its second
// factors (an authenticator app confirmed, a passkey added, a factor removed, every factor reset by the operator or
// removed by the claim of the address), and the session.ended of the sessions each change ends; on every backend,
// each delivery verified by the standardwebhooks package at a real receiver. Codes by otplib, passkeys by a software
// authenticator (test/support).

const FRONTEND = 'https://app.example.test'
const RELYING_PARTY = {
  WEBAUTHN_RP_ID: 'example.test',
  FRONTEND_ORIGIN: FRONTEND,
  PUBLIC_URL: 'https://auth.example.test',
}

describe.each(backends)('user.mfa_changed [$name]', (backend) => {
  let h: EventService
  const secrets: string[] = [PASSWORD]

  beforeAll(async () => {
    h = await startEventService(backend, { AUTH_SESSIONS: 'per-device', ...RELYING_PARTY })
  })
  afterAll(() => h?.close())

  const ok = (reply: Reply) => {
    expect(reply.status, reply.text).toBe(200)
    return reply.body.data
  }
  const sid = (token: string): string => decodeJwt(token).claims.sid
  /** An account whose address was verified at registration, and a second session of it. */
  const verifiedAccount = async () => {
    const email = uniqueEmail()
    ok(await h.call('POST', '/auth/email/send-code', { body: { email, purpose: 'register' } }))
    const code = codeIn(await h.mailbox.next(email)) as string
    const registered = ok(
      await h.call('POST', '/auth/register', {
        body: { email, password: PASSWORD, verification_code: code },
      }),
    )
    const other = ok(await h.call('POST', '/auth/login', { body: { email, password: PASSWORD } }))
    secrets.push(
      code,
      registered.access_token,
      registered.refresh_token,
      other.access_token,
      other.refresh_token,
    )
    return {
      email,
      id: registered.id as string,
      token: registered.access_token as string,
      other: sid(other.access_token),
    }
  }
  /** An authenticator app set up with the password, still pending; its secret is kept among the secrets. */
  const setUpTotp = async (token: string) => {
    const setup = ok(
      await h.call('POST', '/auth/mfa/totp/setup', { headers: bearer(token), body: { password: PASSWORD } }),
    )
    secrets.push(setup.secret)
    return setup as { factor_id: string; secret: string }
  }
  /** The app's current code confirms the factor: the answer, with its recovery codes. */
  const confirmTotp = async (token: string, setup: { factor_id: string; secret: string }) =>
    ok(
      await h.call('POST', '/auth/mfa/totp/confirm', {
        headers: bearer(token),
        body: { factor_id: setup.factor_id, code: authenticator.generate(setup.secret) },
      }),
    )
  const laterEvents = async (userId: string) =>
    (await h.eventsOf(userId)).filter((event) => event.type !== 'user.created')
  const mfaChanged = (userId: string, factors: string[]): Event => ({
    type: 'user.mfa_changed',
    data: { user_id: userId, factors },
  })
  const ended = (userId: string, sessionId: string): Event => ({
    type: 'session.ended',
    data: { user_id: userId, session_id: sessionId, reason: 'mfa_changed' },
  })

  it('R6.5.11 an authenticator app confirmed, a passkey added, each removed: the kinds left each time', async () => {
    const user = await verifiedAccount()
    const setup = await setUpTotp(user.token)
    // a pending factor is no change of the account's factors
    expect(await laterEvents(user.id)).toEqual([])
    const confirmed = await confirmTotp(user.token, setup)
    secrets.push(...confirmed.recovery_codes)
    const expected = [mfaChanged(user.id, ['totp']), ended(user.id, user.other)]
    expect(await laterEvents(user.id)).toEqual(sorted(expected))

    const passkeys = new SoftwareAuthenticator(FRONTEND)
    const options = ok(
      await h.call('POST', '/auth/passkeys/register/options', {
        headers: bearer(user.token),
        body: { password: PASSWORD },
      }),
    )
    const passkey = ok(
      await h.call('POST', '/auth/passkeys/register/verify', {
        headers: bearer(user.token),
        body: { ticket: options.ticket, credential: passkeys.create(options.options) },
      }),
    )
    expected.push(mfaChanged(user.id, ['passkey', 'totp']))
    expect(await laterEvents(user.id)).toEqual(sorted(expected))

    ok(await h.call('DELETE', `/auth/mfa/factors/${setup.factor_id}`, { headers: bearer(user.token) }))
    expected.push(mfaChanged(user.id, ['passkey']))
    expect(await laterEvents(user.id)).toEqual(sorted(expected))
    ok(await h.call('DELETE', `/auth/mfa/factors/${passkey.id}`, { headers: bearer(user.token) }))
    expected.push(mfaChanged(user.id, []))
    expect(await laterEvents(user.id)).toEqual(sorted(expected))

    // new recovery codes change no factor
    await confirmTotp(user.token, await setUpTotp(user.token))
    expected.push(mfaChanged(user.id, ['totp']))
    ok(await h.call('POST', '/auth/mfa/recovery-codes', { headers: bearer(user.token) }))
    expect(await laterEvents(user.id)).toEqual(sorted(expected))
  })

  it("R6.5.11 the operator's mfa-reset: no factor left, and every session ended", async () => {
    const user = await verifiedAccount()
    const setup = await setUpTotp(user.token)
    await confirmTotp(user.token, setup)
    const admin = await h.admin()
    expect(await admin.mfaReset(await admin.find({ id: user.id }))).toEqual({
      factorsRemoved: 1,
      sessionsEnded: 1,
    })
    expect(await laterEvents(user.id)).toEqual(
      sorted([
        mfaChanged(user.id, ['totp']),
        ended(user.id, user.other),
        mfaChanged(user.id, []),
        ended(user.id, sid(user.token)),
      ]),
    )
  })

  it('R6.5.11 the claim of an unverified address removes the factors set up before it', async () => {
    const email = uniqueEmail()
    const registered = ok(await h.call('POST', '/auth/register', { body: { email, password: PASSWORD } }))
    secrets.push(registered.access_token, registered.refresh_token)
    // an unverified account cannot enrol one: the factor an impostor's setup may hold is put in the store
    const id = randomBytes(16).toString('hex')
    expect(
      await h.stores.factors.add({
        id,
        userId: registered.id,
        type: 'passkey',
        name: 'Passkey',
        confirmed: true,
        secret: null,
        lastStep: null,
        credentialId: randomBytes(16).toString('base64url'),
        publicKey: randomBytes(32).toString('base64url'),
        counter: 0,
        backedUp: false,
        transports: [],
        createdAt: Date.now(),
        lastUsedAt: null,
      }),
    ).toBe('added')
    ok(await h.call('POST', '/auth/email/send-code', { body: { email, purpose: 'login' } }))
    const code = codeIn(await h.mailbox.next(email)) as string
    secrets.push(code)
    const signedIn = ok(
      await h.call('POST', '/auth/login/email-code', { body: { email, verification_code: code } }),
    )
    secrets.push(signedIn.access_token, signedIn.refresh_token)
    const events = await laterEvents(registered.id)
    expect(events.filter((event) => event.type === 'user.mfa_changed')).toEqual([
      mfaChanged(registered.id, []),
    ])
    expect(events.map((event) => event.type).toSorted()).toEqual([
      'session.ended',
      'user.mfa_changed',
      'user.password_changed',
      'user.updated',
    ])
  })

  it('R6.5.1 no body carries a password, a hash, a token, a code or a secret', async () => {
    expectNoSecrets(
      (await h.settled()).map((event) => event.body),
      secrets,
    )
  })
})
