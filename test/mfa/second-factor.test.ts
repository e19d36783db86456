import { authenticator } from 'otplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { type Backend, type BackendInstance, backends } from '../support/backends.js'
import { bearer, call, expectError, PASSWORD, type Reply, uniqueEmail } from '../support/http.js'
import { codeIn, emlMailbox, type Mailbox, resetKeyIn } from '../support/mailbox.js'
import { startTestService, TEST_SECRET, type TestService } from '../support/test-service.js'

// docs/api.md §4.25: authenticator codes, recovery codes and the second step of every first factor, on every backend.
// Codes are computed by otplib, an implementation that is not the service's (otpauth).

const STEP_MS = 30_000
const SECOND_FACTOR_INVALID = 'Second factor invalid or expired'
const SECOND_FACTOR_REQUIRED = 'Second factor required'

/** The app's code for `secret` at `atMs`, by otplib. */
const appCode = (secret: string, atMs: number) => authenticator.clone({ epoch: atMs }).generate(secret)

interface Harness {
  service: TestService
  mailbox: Mailbox
  clock: ReturnType<typeof createFixedClock>
  instance: BackendInstance
  call(method: string, url: string, options?: Parameters<typeof call>[3]): Promise<Reply>
  close(): Promise<void>
}

async function start(backend: Backend, env: Record<string, string> = {}, instance?: BackendInstance) {
  const own = instance ?? (await backend.setup())
  // a time in the middle of a 30-second step, so that "one step off" is never a step boundary away
  const clock = createFixedClock(Math.floor(Date.now() / STEP_MS) * STEP_MS + STEP_MS / 2)
  const service = await startTestService(backend, { instance: own, clock, env })
  const mailbox = emlMailbox(own.env.DATA_DIR as string)
  return {
    service,
    mailbox,
    clock,
    instance: own,
    call: (method: string, url: string, options: Parameters<typeof call>[3] = {}) =>
      call(service.app, method, url, options),
    async close() {
      await service.close()
      await mailbox.close()
      if (instance === undefined) await own.teardown()
    },
  } satisfies Harness
}

/** The code of the next mail to `email` that carries one (notices, such as factor_added, carry none). */
async function nextCode(h: Harness, email: string): Promise<string> {
  for (;;) {
    const code = codeIn(await h.mailbox.next(email))
    if (code !== null) return code
  }
}

/** An account registered and its address verified with the code mailed to it; its login session's tokens. */
async function verifiedAccount(h: Harness) {
  const email = uniqueEmail()
  const registered = await h.call('POST', '/auth/register', { body: { email, password: PASSWORD } })
  expect(registered.status, registered.text).toBe(200)
  const accessToken = registered.body.data.access_token as string
  const sent = await h.call('POST', '/auth/me/send-code', {
    headers: bearer(accessToken),
    body: { purpose: 'verify_email' },
  })
  expect(sent.status, sent.text).toBe(200)
  const code = await nextCode(h, email)
  const verified = await h.call('POST', '/auth/email/verify', {
    headers: bearer(accessToken),
    body: { verification_code: code },
  })
  expect(verified.status, verified.text).toBe(200)
  return { email, id: registered.body.data.id as string, accessToken }
}

/** Enrols an authenticator with the password and confirms it with otplib's code: the secret and recovery codes. */
async function enrolTotp(h: Harness, accessToken: string) {
  const setup = await h.call('POST', '/auth/mfa/totp/setup', {
    headers: bearer(accessToken),
    body: { password: PASSWORD },
  })
  expect(setup.status, setup.text).toBe(200)
  const { factor_id: factorId, secret, uri, qr_code: qrCode } = setup.body.data
  expect(uri).toMatch(/^otpauth:\/\/totp\//)
  expect(qrCode).toMatch(/^data:image\/svg\+xml;base64,/)
  const confirmed = await h.call('POST', '/auth/mfa/totp/confirm', {
    headers: bearer(accessToken),
    body: { factor_id: factorId, code: appCode(secret, h.clock.now()) },
  })
  expect(confirmed.status, confirmed.text).toBe(200)
  return {
    factorId: factorId as string,
    secret: secret as string,
    recoveryCodes: confirmed.body.data.recovery_codes as string[],
  }
}

const login = (h: Harness, email: string, password = PASSWORD) =>
  h.call('POST', '/auth/login', { body: { email, password } })

/** A password login that must answer the challenge: its ticket. */
async function challenged(h: Harness, email: string): Promise<string> {
  const reply = await login(h, email)
  expect(reply.status, reply.text).toBe(200)
  expect(reply.body.data).toEqual({
    mfa_required: true,
    mfa_ticket: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    factors: expect.arrayContaining(['totp']),
  })
  return reply.body.data.mfa_ticket
}

const verify = (h: Harness, ticket: string, proof: { code: string } | { recovery_code: string }) =>
  h.call('POST', '/auth/mfa/verify', { body: { mfa_ticket: ticket, ...proof } })

/** The code of the step `steps` away from the clock's. */
const codeAt = (h: Harness, secret: string, steps: number) => appCode(secret, h.clock.now() + steps * STEP_MS)

describe.each(backends)('second factors [$name]', (backend) => {
  let h: Harness

  beforeAll(async () => {
    // a session per device, so that "the other sessions" exist to be ended; the rotation below runs in single mode
    h = await start(backend, { AUTH_SESSIONS: 'per-device' })
  })
  afterAll(() => h?.close())

  it('enrolment needs a verified address and the password (or a manage_factors code)', async () => {
    const email = uniqueEmail()
    const registered = await h.call('POST', '/auth/register', { body: { email, password: PASSWORD } })
    const token = registered.body.data.access_token
    // not verified: 403, whatever the proof
    expectError(
      await h.call('POST', '/auth/mfa/totp/setup', { headers: bearer(token), body: { password: PASSWORD } }),
      403,
      "Verify the account's e-mail address first",
    )
    const account = await verifiedAccount(h)
    const setup = (body: unknown) =>
      h.call('POST', '/auth/mfa/totp/setup', { headers: bearer(account.accessToken), body })
    expectError(await setup({ password: 'not the password' }), 400, 'Password is incorrect')
    expect((await setup({})).status).toBe(400)
    expect((await setup({ password: PASSWORD, verification_code: '123456' })).status).toBe(400)
    expectError(await setup({ verification_code: '123456' }), 400, 'Invalid or expired verification code')
    // a code of purpose manage_factors, mailed to the account's address
    const sent = await h.call('POST', '/auth/me/send-code', {
      headers: bearer(account.accessToken),
      body: { purpose: 'manage_factors' },
    })
    expect(sent.status, sent.text).toBe(200)
    const code = await nextCode(h, account.email)
    const byCode = await setup({ verification_code: code })
    expect(byCode.status, byCode.text).toBe(200)
    // a pending factor changes nothing: the password still signs in alone
    const plain = await login(h, account.email)
    expect(plain.body.data.access_token).toEqual(expect.any(String))
    // without a token: 401
    expect((await h.call('POST', '/auth/mfa/totp/setup', { body: { password: PASSWORD } })).status).toBe(401)
  })

  it('confirmation takes the app code; sign-in then asks for it, and a code is accepted once', async () => {
    const account = await verifiedAccount(h)
    const setup = await h.call('POST', '/auth/mfa/totp/setup', {
      headers: bearer(account.accessToken),
      body: { password: PASSWORD },
    })
    const { factor_id: factorId, secret } = setup.body.data
    const confirm = (code: string) =>
      h.call('POST', '/auth/mfa/totp/confirm', {
        headers: bearer(account.accessToken),
        body: { factor_id: factorId, code },
      })
    expectError(await confirm(codeAt(h, secret, 3)), 400, 'Invalid or expired verification code')
    const confirmed = await confirm(appCode(secret, h.clock.now()))
    expect(confirmed.status, confirmed.text).toBe(200)
    const codes = confirmed.body.data.recovery_codes
    expect(codes).toHaveLength(10)
    for (const each of codes) expect(each).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/)
    expect(new Set(codes).size).toBe(10)
    // confirmed once: the factor is no longer pending
    expect((await confirm(codeAt(h, secret, 1))).status).toBe(404)
    const factors = await h.call('GET', '/auth/mfa/factors', { headers: bearer(account.accessToken) })
    expect(factors.body.data).toEqual([
      {
        id: factorId,
        type: 'totp',
        name: 'Authenticator app',
        created_at: expect.any(String),
        last_used_at: expect.any(String),
      },
    ])

    // the password alone no longer signs in: the challenge, no tokens
    h.clock.advance(STEP_MS)
    const ticket = await challenged(h, account.email)
    const code = appCode(secret, h.clock.now())
    const signedIn = await verify(h, ticket, { code })
    expect(signedIn.status, signedIn.text).toBe(200)
    expect(signedIn.body.data).toMatchObject({ id: account.id, email: account.email })
    expect(signedIn.body.data.access_token).toEqual(expect.any(String))
    // the same code again, with a new ticket: refused (RFC 6238 §5.2), the ticket keeps its other tries
    const again = await challenged(h, account.email)
    expectError(await verify(h, again, { code }), 401, SECOND_FACTOR_INVALID)
    h.clock.advance(STEP_MS)
    expect((await verify(h, again, { code: appCode(secret, h.clock.now()) })).status).toBe(200)
  })

  it('one step of drift either way is accepted, two are not', async () => {
    const account = await verifiedAccount(h)
    const { secret } = await enrolTotp(h, account.accessToken)
    h.clock.advance(10 * STEP_MS)
    const ticket = await challenged(h, account.email)
    expectError(await verify(h, ticket, { code: codeAt(h, secret, -2) }), 401, SECOND_FACTOR_INVALID)
    expectError(await verify(h, ticket, { code: codeAt(h, secret, 2) }), 401, SECOND_FACTOR_INVALID)
    expect((await verify(h, ticket, { code: codeAt(h, secret, -1) })).status).toBe(200)
    const next = await challenged(h, account.email)
    expect((await verify(h, next, { code: codeAt(h, secret, 1) })).status).toBe(200)
    // the current step's code is older than the one accepted last: refused too
    const last = await challenged(h, account.email)
    expectError(await verify(h, last, { code: codeAt(h, secret, 0) }), 401, SECOND_FACTOR_INVALID)
  })

  it('recovery codes are used once each, in any case and with or without hyphens', async () => {
    const account = await verifiedAccount(h)
    const { recoveryCodes } = await enrolTotp(h, account.accessToken)
    const [first, second] = recoveryCodes as [string, string]
    const ticket = await challenged(h, account.email)
    const used = await verify(h, ticket, { recovery_code: first })
    expect(used.status, used.text).toBe(200)
    const again = await challenged(h, account.email)
    expectError(await verify(h, again, { recovery_code: first }), 401, SECOND_FACTOR_INVALID)
    const loose = second.replaceAll('-', ' ').toLowerCase()
    expect((await verify(h, again, { recovery_code: loose })).status).toBe(200)
    // both a code and a recovery code, or neither: 400
    const third = await challenged(h, account.email)
    expect((await h.call('POST', '/auth/mfa/verify', { body: { mfa_ticket: third } })).status).toBe(400)
    // a new set voids the old one; the confirming session counts as established with the second factor
    expect((await verify(h, third, { recovery_code: recoveryCodes[2] as string })).status).toBe(200)
    const fresh = await h.call('POST', '/auth/mfa/recovery-codes', { headers: bearer(account.accessToken) })
    expect(fresh.status, fresh.text).toBe(200)
    const fourth = await challenged(h, account.email)
    expectError(
      await verify(h, fourth, { recovery_code: recoveryCodes[3] as string }),
      401,
      SECOND_FACTOR_INVALID,
    )
    expect((await verify(h, fourth, { recovery_code: fresh.body.data.recovery_codes[0] })).status).toBe(200)
  })

  it('a ticket lives five minutes, is used once and allows five tries', async () => {
    const account = await verifiedAccount(h)
    const { secret } = await enrolTotp(h, account.accessToken)
    h.clock.advance(STEP_MS)
    // used once
    const ticket = await challenged(h, account.email)
    expect((await verify(h, ticket, { code: codeAt(h, secret, 0) })).status).toBe(200)
    h.clock.advance(STEP_MS)
    expectError(await verify(h, ticket, { code: codeAt(h, secret, 0) }), 401, SECOND_FACTOR_INVALID)
    // five minutes
    const late = await challenged(h, account.email)
    h.clock.advance(5 * 60_000)
    expectError(await verify(h, late, { code: codeAt(h, secret, 0) }), 401, SECOND_FACTOR_INVALID)
    // four wrong tries leave the fifth; five use the ticket up
    const tried = await challenged(h, account.email)
    for (let n = 0; n < 4; n++)
      expectError(await verify(h, tried, { code: '000000' }), 401, SECOND_FACTOR_INVALID)
    expect((await verify(h, tried, { code: codeAt(h, secret, 0) })).status).toBe(200)
    h.clock.advance(10 * 60_000)
    const spent = await challenged(h, account.email)
    for (let n = 0; n < 5; n++)
      expectError(await verify(h, spent, { code: '000000' }), 401, SECOND_FACTOR_INVALID)
    h.clock.advance(STEP_MS)
    expectError(await verify(h, spent, { code: codeAt(h, secret, 0) }), 401, SECOND_FACTOR_INVALID)
    // a ticket that never was
    expectError(await verify(h, 'A'.repeat(43), { code: '123456' }), 401, SECOND_FACTOR_INVALID)
  })

  it('every first factor answers the challenge, and no tokens; an account without a factor as before', async () => {
    const plain = await verifiedAccount(h)
    const account = await verifiedAccount(h)
    await enrolTotp(h, account.accessToken)
    // a password
    expect((await login(h, plain.email)).body.data.access_token).toEqual(expect.any(String))
    await challenged(h, account.email)
    // a code mailed to the address
    const codeLogin = async (email: string) => {
      await h.call('POST', '/auth/email/send-code', { body: { email, purpose: 'login' } })
      const code = await nextCode(h, email)
      return h.call('POST', '/auth/login/email-code', { body: { email, verification_code: code } })
    }
    expect((await codeLogin(plain.email)).body.data.access_token).toEqual(expect.any(String))
    const byCode = await codeLogin(account.email)
    expect(byCode.status, byCode.text).toBe(200)
    expect(byCode.body.data).toMatchObject({ mfa_required: true })
    expect(byCode.body.data.access_token).toBeUndefined()
    // a reset: the password is changed and every session ends, but only the second step signs in
    const other = await challenged(h, account.email)
    await h.call('POST', '/auth/email/send-code', {
      body: { email: account.email, purpose: 'reset_password' },
    })
    let key: string | null = null
    while (key === null) key = resetKeyIn(await h.mailbox.next(account.email))
    const reset = await h.call('POST', '/auth/password/reset', {
      body: { email: account.email, verification_code: key, new_password: 'a new password 1' },
    })
    expect(reset.status, reset.text).toBe(200)
    expect(reset.body.data).toMatchObject({ mfa_required: true })
    expect(reset.body.data.refresh_token).toBeUndefined()
    // every session ended: the reading token sees none left
    const left = await h.call('GET', '/auth/sessions', { headers: bearer(account.accessToken) })
    expect(left.body.data).toEqual([])
    // the new password is the one now
    expect((await login(h, account.email, 'a new password 1')).body.data.mfa_required).toBe(true)
    expectError(await login(h, account.email), 401, 'E-mail or password wrong')
    // an earlier ticket still completes its own sign-in: it was a right password's
    expect(other).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it("removing the last factor turns the second step off; a password change keeps the session's status", async () => {
    const account = await verifiedAccount(h)
    const { factorId, secret } = await enrolTotp(h, account.accessToken)
    h.clock.advance(STEP_MS)
    const ticket = await challenged(h, account.email)
    const withBoth = await verify(h, ticket, { code: codeAt(h, secret, 0) })
    // the password change's new session is established as the caller's was: with the second factor
    const changed = await h.call('POST', '/auth/password/change', {
      headers: bearer(withBoth.body.data.access_token),
      body: { current_password: PASSWORD, new_password: 'another password 2' },
    })
    expect(changed.status, changed.text).toBe(200)
    const token = changed.body.data.access_token
    const remove = (id: string) => h.call('DELETE', `/auth/mfa/factors/${id}`, { headers: bearer(token) })
    expectError(await remove('f'.repeat(32)), 404, 'Factor not found')
    expectError(await remove('not-an-id'), 404, 'Factor not found')
    expect((await remove(factorId)).status).toBe(200)
    // the recovery codes went with the last factor; a password alone signs in again
    expect(await h.service.stores.factors.recoveryCodesLeft(account.id)).toBe(0)
    expect((await login(h, account.email, 'another password 2')).body.data.access_token).toEqual(
      expect.any(String),
    )
  })

  it('a session without the second factor may not remove one or renew the recovery codes: 403', async () => {
    const donor = await verifiedAccount(h)
    await enrolTotp(h, donor.accessToken)
    // a session of the password alone (no factor yet), then a factor put into the store for the account
    const account = await verifiedAccount(h)
    const { stores } = h.service
    const [factor] = await stores.factors.list(donor.id)
    const id = 'a'.repeat(32)
    await stores.factors.add({ ...(factor as NonNullable<typeof factor>), id, userId: account.id })
    expectError(
      await h.call('DELETE', `/auth/mfa/factors/${id}`, { headers: bearer(account.accessToken) }),
      403,
      SECOND_FACTOR_REQUIRED,
    )
    expectError(
      await h.call('POST', '/auth/mfa/recovery-codes', { headers: bearer(account.accessToken) }),
      403,
      SECOND_FACTOR_REQUIRED,
    )
    expect((await stores.factors.list(account.id)).map((each) => each.id)).toEqual([id])
  })

  it('adding a factor ends the other sessions, and an ended session changes no factor', async () => {
    const account = await verifiedAccount(h)
    const before = await login(h, account.email)
    const enrolled = await enrolTotp(h, account.accessToken)
    expectError(
      await h.call('DELETE', `/auth/mfa/factors/${enrolled.factorId}`, {
        headers: bearer(before.body.data.access_token),
      }),
      401,
      'Access token is invalid or expired',
    )
    const sessions = await h.call('GET', '/auth/sessions', { headers: bearer(account.accessToken) })
    expect(sessions.body.data).toHaveLength(1)
  })

  it("the claim of an address removes an impostor's factors", async () => {
    // an impostor registered the owner's address (unverified); a factor in the store as it could have been enrolled
    // before addresses had to be verified
    const email = uniqueEmail()
    const impostor = await h.call('POST', '/auth/register', { body: { email, password: PASSWORD } })
    const userId = impostor.body.data.id as string
    const donor = await verifiedAccount(h)
    await enrolTotp(h, donor.accessToken)
    const [factor] = await h.service.stores.factors.list(donor.id)
    await h.service.stores.factors.add({
      ...(factor as NonNullable<typeof factor>),
      id: 'b'.repeat(32),
      userId,
    })
    expect((await login(h, email)).body.data.mfa_required).toBe(true)
    // the owner signs in with a code mailed to the address: the claim ends the impostor's setup, factors included
    await h.call('POST', '/auth/email/send-code', { body: { email, purpose: 'login' } })
    const code = await nextCode(h, email)
    const owner = await h.call('POST', '/auth/login/email-code', { body: { email, verification_code: code } })
    expect(owner.status, owner.text).toBe(200)
    expect(owner.body.data.access_token).toEqual(expect.any(String))
    expect(await h.service.stores.factors.list(userId)).toEqual([])
  })
})

describe.each(backends)('second factors across a rotation of AUTH_JWT_SECRET [$name]', (backend) => {
  it('work after the secret is rotated and the previous one removed', async () => {
    const instance = await backend.setup()
    try {
      const first = await start(backend, {}, instance)
      let account: { email: string }
      let enrolled: Awaited<ReturnType<typeof enrolTotp>>
      try {
        const verified = await verifiedAccount(first)
        account = verified
        enrolled = await enrolTotp(first, verified.accessToken)
      } finally {
        await first.close()
      }
      const rotated = 'rotated-secret-0123456789-abcdefghijklmnopqrstuvw'
      // the new secret, the old one still accepted: the data key is sealed again under the new one
      const during = await start(
        backend,
        { AUTH_JWT_SECRET: rotated, AUTH_JWT_PREVIOUS_SECRETS: TEST_SECRET },
        instance,
      )
      try {
        during.clock.advance(STEP_MS)
        const ticket = await challenged(during, account.email)
        expect((await verify(during, ticket, { code: codeAt(during, enrolled.secret, 0) })).status).toBe(200)
      } finally {
        await during.close()
      }
      // the old secret gone
      const after = await start(backend, { AUTH_JWT_SECRET: rotated }, instance)
      try {
        after.clock.advance(3 * STEP_MS)
        const ticket = await challenged(after, account.email)
        expect((await verify(after, ticket, { code: codeAt(after, enrolled.secret, 0) })).status).toBe(200)
        const next = await challenged(after, account.email)
        const recovered = await verify(after, next, { recovery_code: enrolled.recoveryCodes[0] as string })
        expect(recovered.status, recovered.text).toBe(200)
      } finally {
        await after.close()
      }
    } finally {
      await instance.teardown()
    }
  })
})
