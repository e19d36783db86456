import { authenticator } from 'otplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { bearer, call, PASSWORD, uniqueEmail } from '../support/http.js'
import { codeIn, emlMailbox } from '../support/mailbox.js'
import { startTestService, type TestService } from '../support/test-service.js'

// docs/api.md §4.25 across instances: two services on one PostgreSQL database (each its own pool), the challenge's
// ticket and the TOTP step each used at most once, whichever instance a request reaches.

const STEP_MS = 30_000
const ROUNDS = 5
const postgres = backends.find((backend) => backend.name === 'postgres')

describe.skipIf(postgres === undefined)('second factors on two instances [postgres]', () => {
  let instance: BackendInstance
  let first: TestService
  let second: TestService
  // one time for both instances, moved together
  const start = Math.floor(Date.now() / STEP_MS) * STEP_MS + STEP_MS / 2
  const clocks = [createFixedClock(start), createFixedClock(start)]
  const advance = (ms: number) => {
    for (const clock of clocks) clock.advance(ms)
  }
  const now = () => clocks[0]?.now() as number
  let email: string
  let secret: string

  beforeAll(async () => {
    const backend = postgres as NonNullable<typeof postgres>
    instance = await backend.setup()
    // Without Redis each instance counts login attempts on its own (docs/api.md): a login settled by the other
    // instance's verification is never settled here, so the instance that loses the races would slow the owner after
    // AUTH_LOGIN_BACKOFF_AFTER of them (429). That per-process throttle is not what this file tests: off (0).
    const env = { AUTH_LOGIN_BACKOFF_AFTER: '0' }
    const started = await Promise.all(
      clocks.map((clock) => startTestService(backend, { instance, clock, env })),
    )
    first = started[0] as TestService
    second = started[1] as TestService
    const a = first.app
    email = uniqueEmail()
    const registered = await call(a, 'POST', '/auth/register', { body: { email, password: PASSWORD } })
    const token = registered.body.data.access_token
    await call(a, 'POST', '/auth/me/send-code', { headers: bearer(token), body: { purpose: 'verify_email' } })
    const mailbox = emlMailbox(instance.env.DATA_DIR as string)
    const code = codeIn(await mailbox.next(email))
    await mailbox.close()
    await call(a, 'POST', '/auth/email/verify', { headers: bearer(token), body: { verification_code: code } })
    const setup = await call(a, 'POST', '/auth/mfa/totp/setup', {
      headers: bearer(token),
      body: { password: PASSWORD },
    })
    secret = setup.body.data.secret
    const confirmed = await call(second.app, 'POST', '/auth/mfa/totp/confirm', {
      headers: bearer(token),
      body: {
        factor_id: setup.body.data.factor_id,
        code: authenticator.clone({ epoch: now() }).generate(secret),
      },
    })
    expect(confirmed.status, confirmed.text).toBe(200)
  })
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()])
    await instance?.teardown()
  })

  const ticket = async (service: TestService) => {
    const reply = await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
    expect(reply.body.data.mfa_required, reply.text).toBe(true)
    return reply.body.data.mfa_ticket as string
  }
  const verify = (service: TestService, mfaTicket: string, code: string) =>
    call(service.app, 'POST', '/auth/mfa/verify', { body: { mfa_ticket: mfaTicket, code } })

  it('one ticket verified at both at once logs in exactly once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      advance(STEP_MS)
      const shared = await ticket(round % 2 === 0 ? first : second)
      const code = authenticator.clone({ epoch: now() }).generate(secret)
      const replies = await Promise.all([verify(first, shared, code), verify(second, shared, code)])
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 401])
    }
  })

  it('one TOTP code is accepted at most once across both', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      advance(STEP_MS)
      const [one, two] = await Promise.all([ticket(first), ticket(second)])
      const code = authenticator.clone({ epoch: now() }).generate(secret)
      const replies = await Promise.all([verify(first, one, code), verify(second, two, code)])
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 401])
    }
  })
})
