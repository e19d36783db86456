import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Backend, backends } from '../support/backends.js'
import { expectError, PASSWORD, type Reply, uniqueEmail } from '../support/http.js'
import { codeIn, emlMailbox, type Mailbox } from '../support/mailbox.js'
import { SoftwareAuthenticator } from '../support/software-authenticator.js'
import { apiPath, startTestService, type TestService } from '../support/test-service.js'

// docs/api.md §4.26: passkeys, registered and signed in with by a software authenticator (support/
// software-authenticator.ts, WebAuthn by hand) against the real service listening on 127.0.0.1, on every backend.
// The relying party is example.test, the front end https://app.example.test and the service https://auth.example.test:
// what a browser on those pages would send is accepted, and what it could not send (another origin, another RP ID, a
// challenge used already, a counter gone backwards, another account's passkey) is refused.

const RP_ID = 'example.test'
const FRONTEND = 'https://app.example.test'
const SERVICE = 'https://auth.example.test'
const RELYING_PARTY = { WEBAUTHN_RP_ID: RP_ID, FRONTEND_ORIGIN: FRONTEND, PUBLIC_URL: SERVICE }
const PASSKEY_REFUSED = 'Passkey not accepted'
const NOT_VERIFIED = 'Passkey could not be verified: start again'
const TICKET = /^[A-Za-z0-9_-]{43}$/
const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

interface Harness {
  service: TestService
  mailbox: Mailbox
  call(method: string, path: string, options?: { token?: string; body?: unknown }): Promise<Reply>
  close(): Promise<void>
}

async function start(backend: Backend, env: Record<string, string>): Promise<Harness> {
  const instance = await backend.setup()
  const service = await startTestService(backend, { instance, env })
  await service.app.listen({ host: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const mailbox = emlMailbox(instance.env.DATA_DIR as string)
  return {
    service,
    mailbox,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = {}
      if (options.body !== undefined) headers['content-type'] = 'application/json'
      if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
      const response = await fetch(`${base}${apiPath(path)}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      })
      const text = await response.text()
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        body = undefined
      }
      return { status: response.status, headers: Object.fromEntries(response.headers), body, text }
    },
    async close() {
      await service.close()
      await mailbox.close()
      await instance.teardown()
    },
  }
}

/** An account registered and its address verified with the code mailed to it; its login session's token. */
async function verifiedAccount(h: Harness) {
  const email = uniqueEmail()
  const registered = await h.call('POST', '/auth/register', { body: { email, password: PASSWORD } })
  expect(registered.status, registered.text).toBe(200)
  const token = registered.body.data.access_token as string
  const sent = await h.call('POST', '/auth/me/send-code', { token, body: { purpose: 'verify_email' } })
  expect(sent.status, sent.text).toBe(200)
  const code = codeIn(await h.mailbox.next(email))
  const verified = await h.call('POST', '/auth/email/verify', { token, body: { verification_code: code } })
  expect(verified.status, verified.text).toBe(200)
  return { email, id: registered.body.data.id as string, token }
}

/** POST /auth/passkeys/register/options with the password: the ticket and the creation options. */
async function registrationOptions(h: Harness, token: string) {
  const reply = await h.call('POST', '/auth/passkeys/register/options', {
    token,
    body: { password: PASSWORD },
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data as { ticket: string; options: any }
}

/** Registers a passkey of `authenticator` to the account: the factor answered. */
async function registerPasskey(
  h: Harness,
  token: string,
  authenticator: SoftwareAuthenticator,
  name?: string,
) {
  const { ticket, options } = await registrationOptions(h, token)
  const reply = await h.call('POST', '/auth/passkeys/register/verify', {
    token,
    body: { ticket, credential: authenticator.create(options), ...(name === undefined ? {} : { name }) },
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/** POST /auth/passkeys/login/options: the ticket and the request options. */
async function loginOptions(h: Harness, mfaTicket?: string) {
  const reply = await h.call('POST', '/auth/passkeys/login/options', {
    body: mfaTicket === undefined ? {} : { mfa_ticket: mfaTicket },
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data as { ticket: string; options: any }
}

const loginVerify = (h: Harness, body: Record<string, unknown>) =>
  h.call('POST', '/auth/passkeys/login/verify', { body })

/** A password login of an account with a factor: its challenge's ticket. */
async function challenged(h: Harness, email: string): Promise<string> {
  const reply = await h.call('POST', '/auth/login', { body: { email, password: PASSWORD } })
  expect(reply.status, reply.text).toBe(200)
  expect(reply.body.data).toEqual({
    mfa_required: true,
    mfa_ticket: expect.stringMatching(TICKET),
    factors: expect.arrayContaining(['passkey']),
  })
  return reply.body.data.mfa_ticket
}

/** The account's audit events of `type`, written out first. */
async function events(h: Harness, userId: string, type: string) {
  await h.service.flushAudit()
  return (await h.service.stores.audit.list({ userId })).filter((event) => event.type === type)
}

describe.each(backends)('passkeys [$name]', (backend) => {
  let h: Harness

  beforeAll(async () => {
    h = await start(backend, RELYING_PARTY)
  })
  afterAll(() => h?.close())

  it('registers a passkey with the password, then signs in with it alone, without an e-mail address', async () => {
    const account = await verifiedAccount(h)
    const { ticket, options } = await registrationOptions(h, account.token)
    expect(ticket).toMatch(TICKET)
    expect(options).toMatchObject({
      rp: { id: RP_ID, name: expect.any(String) },
      user: { id: Buffer.from(account.id).toString('base64url'), name: account.email },
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      pubKeyCredParams: [
        { type: 'public-key', alg: -8 },
        { type: 'public-key', alg: -7 },
        { type: 'public-key', alg: -257 },
      ],
      timeout: 300_000,
      attestation: 'none',
      excludeCredentials: [],
      authenticatorSelection: {
        residentKey: 'required',
        requireResidentKey: true,
        userVerification: 'preferred',
      },
    })
    const authenticator = new SoftwareAuthenticator(FRONTEND)
    const registered = await h.call('POST', '/auth/passkeys/register/verify', {
      token: account.token,
      body: { ticket, credential: authenticator.create(options), name: '  Work laptop ' },
    })
    expect(registered.status, registered.text).toBe(200)
    const factor = registered.body.data
    expect(factor).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      type: 'passkey',
      name: 'Work laptop',
      created_at: expect.stringMatching(INSTANT),
      last_used_at: null,
    })
    const listed = await h.call('GET', '/auth/mfa/factors', { token: account.token })
    expect(listed.body.data).toEqual([factor])
    expect(await events(h, account.id, 'passkey_added')).toHaveLength(1)
    // the next registration's options exclude it, so that the browser does not make a second one on the device
    const next = await registrationOptions(h, account.token)
    expect(next.options.excludeCredentials).toEqual([
      { id: authenticator.credentials[0]?.id, type: 'public-key', transports: ['hybrid', 'internal'] },
    ])

    // a sign-in by the passkey alone: request options with no allowCredentials, user verification required
    const login = await loginOptions(h)
    expect(login.ticket).toMatch(TICKET)
    expect(login.options).toEqual({
      rpId: RP_ID,
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      timeout: 300_000,
      userVerification: 'required',
    })
    // a browser that does not know the authenticator's attachment says null
    const assertion = { ...authenticator.get(login.options), authenticatorAttachment: null }
    const signedIn = await loginVerify(h, { ticket: login.ticket, credential: assertion })
    expect(signedIn.status, signedIn.text).toBe(200)
    expect(signedIn.body.data).toMatchObject({
      id: account.id,
      email: account.email,
      access_token: expect.any(String),
      refresh_token: expect.any(String),
    })
    const success = await events(h, account.id, 'login_succeeded')
    expect(success.at(-1)?.reason).toBe('passkey')
    // the session counts as established with the second factor: it may remove the factor (§4.25)
    const token = signedIn.body.data.access_token
    const used = await h.call('GET', '/auth/mfa/factors', { token })
    expect(used.body.data[0].last_used_at).toMatch(INSTANT)

    // a password now needs the second step; without user verification the passkey alone does not sign in
    await challenged(h, account.email)
    const unverified = await loginOptions(h)
    expectError(
      await loginVerify(h, {
        ticket: unverified.ticket,
        credential: authenticator.get(unverified.options, { userVerified: false }),
      }),
      401,
      PASSKEY_REFUSED,
    )
    const removed = await h.call('DELETE', `/auth/mfa/factors/${factor.id}`, { token })
    expect(removed.status, removed.text).toBe(200)
    // removed: its assertions name no passkey
    const gone = await loginOptions(h)
    expectError(
      await loginVerify(h, { ticket: gone.ticket, credential: authenticator.get(gone.options) }),
      401,
      PASSKEY_REFUSED,
    )
  })

  it('completes the second step of a password sign-in, with user verification preferred', async () => {
    const account = await verifiedAccount(h)
    const authenticator = new SoftwareAuthenticator(FRONTEND)
    await registerPasskey(h, account.token, authenticator)
    const mfaTicket = await challenged(h, account.email)
    const { ticket, options } = await loginOptions(h, mfaTicket)
    expect(options.userVerification).toBe('preferred')
    // a security key without a PIN: user presence only, enough for a second step
    const credential = authenticator.get(options, { userVerified: false })
    const signedIn = await loginVerify(h, { ticket, credential, mfa_ticket: mfaTicket })
    expect(signedIn.status, signedIn.text).toBe(200)
    expect(signedIn.body.data).toMatchObject({ id: account.id, access_token: expect.any(String) })
    expect((await events(h, account.id, 'login_succeeded')).at(-1)?.reason).toBe('mfa')
    // the challenge is used up: another passkey sign-in for it is refused
    const again = await loginOptions(h, mfaTicket)
    expectError(
      await loginVerify(h, {
        ticket: again.ticket,
        credential: authenticator.get(again.options),
        mfa_ticket: mfaTicket,
      }),
      401,
      PASSKEY_REFUSED,
    )
  })

  it("refuses another account's passkey for a challenge, and counts the try", async () => {
    const owner = await verifiedAccount(h)
    const other = await verifiedAccount(h)
    const ownerKey = new SoftwareAuthenticator(FRONTEND)
    const otherKey = new SoftwareAuthenticator(FRONTEND)
    await registerPasskey(h, owner.token, ownerKey)
    await registerPasskey(h, other.token, otherKey)
    const mfaTicket = await challenged(h, owner.email)
    const wrong = await loginOptions(h, mfaTicket)
    expectError(
      await loginVerify(h, {
        ticket: wrong.ticket,
        credential: otherKey.get(wrong.options),
        mfa_ticket: mfaTicket,
      }),
      401,
      PASSKEY_REFUSED,
    )
    const failed = await events(h, owner.id, 'mfa_challenge_failed')
    expect(failed.map((event) => event.reason)).toEqual(['passkey'])
    // the challenge keeps its other tries: the owner's passkey completes it
    const right = await loginOptions(h, mfaTicket)
    const signedIn = await loginVerify(h, {
      ticket: right.ticket,
      credential: ownerKey.get(right.options),
      mfa_ticket: mfaTicket,
    })
    expect(signedIn.status, signedIn.text).toBe(200)
    expect(signedIn.body.data.id).toBe(owner.id)
  })

  it('refuses an assertion for another origin or another relying party', async () => {
    const account = await verifiedAccount(h)
    const authenticator = new SoftwareAuthenticator(FRONTEND)
    await registerPasskey(h, account.token, authenticator)
    const refused = async (tampering: Parameters<SoftwareAuthenticator['get']>[1]) => {
      const { ticket, options } = await loginOptions(h)
      expectError(
        await loginVerify(h, { ticket, credential: authenticator.get(options, tampering) }),
        401,
        PASSKEY_REFUSED,
      )
    }
    // a phishing page, a subdomain of the relying party that is not one of its origins, plain HTTP
    await refused({ origin: 'https://app.example-test.com' })
    await refused({ origin: 'https://evil.example.test' })
    await refused({ origin: 'http://app.example.test' })
    // our page inside another site's frame
    await refused({ crossOrigin: true })
    // an authenticator asked for another relying party
    await refused({ rpId: 'other.test' })
    await refused({ rpId: 'app.example.test' })
    // PUBLIC_URL's origin is one of the relying party's too
    const { ticket, options } = await loginOptions(h)
    const fromService = await loginVerify(h, {
      ticket,
      credential: authenticator.get(options, { origin: SERVICE }),
    })
    expect(fromService.status, fromService.text).toBe(200)
    // one session per account by default: the sign-in ended the registering one
    const token = fromService.body.data.access_token as string

    // a registration from another origin or for another RP ID is no passkey either
    for (const tampering of [{ origin: 'https://app.example-test.com' }, { rpId: 'other.test' }]) {
      const start = await registrationOptions(h, token)
      expectError(
        await h.call('POST', '/auth/passkeys/register/verify', {
          token: token,
          body: {
            ticket: start.ticket,
            credential: new SoftwareAuthenticator(FRONTEND).create(start.options, tampering),
          },
        }),
        400,
        NOT_VERIFIED,
      )
    }
    expect((await h.call('GET', '/auth/mfa/factors', { token: token })).body.data).toHaveLength(1)
  })

  it('refuses a replayed challenge: a ticket is good once, and an assertion answers its own challenge only', async () => {
    const account = await verifiedAccount(h)
    const authenticator = new SoftwareAuthenticator(FRONTEND)
    await registerPasskey(h, account.token, authenticator)
    const { ticket, options } = await loginOptions(h)
    const credential = authenticator.get(options)
    const signedIn = await loginVerify(h, { ticket, credential })
    expect(signedIn.status, signedIn.text).toBe(200)
    // one session per account by default: the sign-in ended the registering one
    const token = signedIn.body.data.access_token as string
    // the same answer again, and a new assertion of the same challenge: the ticket is used up
    expectError(await loginVerify(h, { ticket, credential }), 401, PASSKEY_REFUSED)
    expectError(
      await loginVerify(h, { ticket, credential: authenticator.get(options) }),
      401,
      PASSKEY_REFUSED,
    )
    // the old assertion with a new ticket: not that ticket's challenge
    const fresh = await loginOptions(h)
    expectError(await loginVerify(h, { ticket: fresh.ticket, credential }), 401, PASSKEY_REFUSED)
    // nor does a refused try leave the ticket for another
    expectError(
      await loginVerify(h, { ticket: fresh.ticket, credential: authenticator.get(fresh.options) }),
      401,
      PASSKEY_REFUSED,
    )

    // registration: the ticket is good once too, and only for the account that asked for it
    const start = await registrationOptions(h, token)
    const second = new SoftwareAuthenticator(FRONTEND)
    const created = second.create(start.options)
    const other = await verifiedAccount(h)
    expectError(
      await h.call('POST', '/auth/passkeys/register/verify', {
        token: other.token,
        body: { ticket: start.ticket, credential: created },
      }),
      400,
      NOT_VERIFIED,
    )
    expectError(
      await h.call('POST', '/auth/passkeys/register/verify', {
        token: token,
        body: { ticket: start.ticket, credential: created },
      }),
      400,
      NOT_VERIFIED,
    )
    // a login ticket is no registration ticket
    const login = await loginOptions(h)
    expectError(
      await h.call('POST', '/auth/passkeys/register/verify', {
        token: token,
        body: {
          ticket: login.ticket,
          credential: second.create({ ...start.options, challenge: login.options.challenge }),
        },
      }),
      400,
      NOT_VERIFIED,
    )
  })

  it('refuses a counter that went backwards, records it, and keeps the counter it had', async () => {
    const account = await verifiedAccount(h)
    const authenticator = new SoftwareAuthenticator(FRONTEND)
    await registerPasskey(h, account.token, authenticator)
    const credential = authenticator.credentials[0]
    if (credential === undefined) throw new Error('no credential')
    const assert = async (counter: number) => {
      const { ticket, options } = await loginOptions(h)
      return loginVerify(h, { ticket, credential: authenticator.get(options, { counter }) })
    }
    expect((await assert(5)).status).toBe(200)
    // a clone of the authenticator: a counter below the last one, or the same
    expectError(await assert(3), 401, PASSKEY_REFUSED)
    expectError(await assert(5), 401, PASSKEY_REFUSED)
    const regressed = await events(h, account.id, 'passkey_counter_regressed')
    expect(regressed).toHaveLength(2)
    // the counter stayed at 5: the next one above it signs in
    expect((await assert(6)).status).toBe(200)
    // in a second step too, where the try counts against the challenge
    const mfaTicket = await challenged(h, account.email)
    const { ticket, options } = await loginOptions(h, mfaTicket)
    expectError(
      await loginVerify(h, {
        ticket,
        credential: authenticator.get(options, { counter: 2 }),
        mfa_ticket: mfaTicket,
      }),
      401,
      PASSKEY_REFUSED,
    )
    expect(await events(h, account.id, 'passkey_counter_regressed')).toHaveLength(3)
    expect((await events(h, account.id, 'mfa_challenge_failed')).map((event) => event.reason)).toEqual([
      'passkey',
    ])
  })

  it('of concurrent verifies of one ticket one signs in; of two assertions with one counter, one', async () => {
    const account = await verifiedAccount(h)
    const authenticator = new SoftwareAuthenticator(FRONTEND)
    await registerPasskey(h, account.token, authenticator)
    const { ticket, options } = await loginOptions(h)
    const credential = authenticator.get(options)
    const once = await Promise.all([1, 2, 3].map(() => loginVerify(h, { ticket, credential })))
    expect(once.map((reply) => reply.status).sort()).toEqual([200, 401, 401])
    // a clone and its original, each answering its own challenge with the same counter: the counter is taken once
    const first = await loginOptions(h)
    const second = await loginOptions(h)
    const counter = (authenticator.credentials[0]?.counter ?? 0) + 1
    const pair = await Promise.all([
      loginVerify(h, { ticket: first.ticket, credential: authenticator.get(first.options, { counter }) }),
      loginVerify(h, { ticket: second.ticket, credential: authenticator.get(second.options, { counter }) }),
    ])
    expect(pair.map((reply) => reply.status).sort()).toEqual([200, 401])
    expect(await events(h, account.id, 'passkey_counter_regressed')).toHaveLength(1)
  })

  it('keeps a counter of zero at zero: an authenticator without a counter signs in each time', async () => {
    const account = await verifiedAccount(h)
    const synced = new SoftwareAuthenticator(FRONTEND, false)
    await registerPasskey(h, account.token, synced)
    for (let round = 0; round < 2; round += 1) {
      const { ticket, options } = await loginOptions(h)
      const reply = await loginVerify(h, { ticket, credential: synced.get(options) })
      expect(reply.status, reply.text).toBe(200)
    }
    // but one that reported a count once may not go back to zero
    const counted = await loginOptions(h)
    expect(
      (
        await loginVerify(h, {
          ticket: counted.ticket,
          credential: synced.get(counted.options, { counter: 4 }),
        })
      ).status,
    ).toBe(200)
    const zero = await loginOptions(h)
    expectError(
      await loginVerify(h, { ticket: zero.ticket, credential: synced.get(zero.options, { counter: 0 }) }),
      401,
      PASSKEY_REFUSED,
    )
  })

  it('registration needs a verified address and the password; a credential is registered once', async () => {
    const email = uniqueEmail()
    const registered = await h.call('POST', '/auth/register', { body: { email, password: PASSWORD } })
    expectError(
      await h.call('POST', '/auth/passkeys/register/options', {
        token: registered.body.data.access_token,
        body: { password: PASSWORD },
      }),
      403,
      "Verify the account's e-mail address first",
    )
    const account = await verifiedAccount(h)
    expectError(
      await h.call('POST', '/auth/passkeys/register/options', {
        token: account.token,
        body: { password: 'not the password' },
      }),
      400,
      'Password is incorrect',
    )
    expect(
      (await h.call('POST', '/auth/passkeys/register/options', { body: { password: PASSWORD } })).status,
    ).toBe(401)

    // a name that breaks the rule of a nickname is refused before the ticket is used
    const authenticator = new SoftwareAuthenticator(FRONTEND)
    const { ticket, options } = await registrationOptions(h, account.token)
    const credential = authenticator.create(options)
    const badName = await h.call('POST', '/auth/passkeys/register/verify', {
      token: account.token,
      body: { ticket, credential, name: 'my\u202ekey' },
    })
    expect(badName.status, badName.text).toBe(400)
    expect(badName.body.data.errors[0].field).toBe('/name')
    const stored = await h.call('POST', '/auth/passkeys/register/verify', {
      token: account.token,
      body: { ticket, credential },
    })
    expect(stored.status, stored.text).toBe(200)
    expect(stored.body.data.name).toBe('Passkey')

    // the same credential for another account (or this one again): 409
    const other = await verifiedAccount(h)
    const again = await registrationOptions(h, other.token)
    expectError(
      await h.call('POST', '/auth/passkeys/register/verify', {
        token: other.token,
        body: {
          ticket: again.ticket,
          credential: authenticator.create(again.options, { credential: authenticator.credentials[0] }),
        },
      }),
      409,
      'Passkey already registered',
    )
  })

  it('a passkey of a disabled account signs in no more', async () => {
    const account = await verifiedAccount(h)
    const authenticator = new SoftwareAuthenticator(FRONTEND)
    await registerPasskey(h, account.token, authenticator)
    expect(await h.service.stores.users.setStatus(account.id, 'disabled', new Date(0).toISOString())).toBe(
      true,
    )
    const { ticket, options } = await loginOptions(h)
    expectError(
      await loginVerify(h, { ticket, credential: authenticator.get(options) }),
      401,
      PASSKEY_REFUSED,
    )
    expect((await events(h, account.id, 'login_failed')).at(-1)?.reason).toBe('disabled')
  })
})

describe.each(backends.slice(0, 1))('passkeys in development without origins [$name]', (backend) => {
  let h: Harness

  beforeAll(async () => {
    h = await start(backend, {})
  })
  afterAll(() => h?.close())

  it('the relying party is localhost, and the service on any port of it is an origin', async () => {
    const account = await verifiedAccount(h)
    const authenticator = new SoftwareAuthenticator('http://localhost:5173')
    const { ticket, options } = await registrationOptions(h, account.token)
    expect(options.rp.id).toBe('localhost')
    const registered = await h.call('POST', '/auth/passkeys/register/verify', {
      token: account.token,
      body: { ticket, credential: authenticator.create(options) },
    })
    expect(registered.status, registered.text).toBe(200)
    const login = async (origin: string) => {
      const start = await loginOptions(h)
      return loginVerify(h, {
        ticket: start.ticket,
        credential: authenticator.get(start.options, { origin }),
      })
    }
    expect((await login('http://localhost:3000')).status).toBe(200)
    expect((await login('https://localhost')).status).toBe(200)
    // an IP address is no origin of the RP ID localhost (nor does a browser use WebAuthn there)
    expectError(await login('http://127.0.0.1:3000'), 401, PASSKEY_REFUSED)
    expectError(await login('http://localhost.example.com'), 401, PASSKEY_REFUSED)
  })
})
