import { AsyncLocalStorage } from 'node:async_hooks'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEmailCodes, sendBudget } from '../../src/auth/email-codes.js'
import { newResetKey } from '../../src/auth/reset-key.js'
import { createFixedClock } from '../../src/clock.js'
import { OFF_HTTP } from '../../src/security-event.js'
import type { Stores } from '../../src/storage/stores.js'
import { type Backend, backends } from '../support/backends.js'
import { bearer, call, PASSWORD, type Reply, registerUser, uniqueEmail } from '../support/http.js'
import {
  codeIn,
  emlMailbox,
  type Mailbox,
  type ReceivedMail,
  resetKeyIn,
  smtpMailbox,
} from '../support/mailbox.js'
import { MESSAGES } from '../support/messages.js'
import { startSmtpServer } from '../support/smtp-server.js'
import { startTestService, TEST_SECRET } from '../support/test-service.js'

const CODE_REFUSED = 'Invalid or expired verification code'
const NEW_PASSWORD = 'staple battery horse'

/** What only the background sender and the expiry pruner call: their work may fall inside a request's time. */
const SENDER_ONLY = new Set([
  'outbox.claim',
  'outbox.remove',
  'outbox.failed',
  'outbox.release',
  'codes.prune',
  'sharedCounters.prune',
  'tickets.prune',
])

/** Marks the store calls a test request makes, apart from those of the background sender. */
const measured = new AsyncLocalStorage<true>()

/**
 * Every store call made for a request run inside `measured`, by `<store>.<method>`, in order: what "the same work"
 * is measured by. The sender's calls run in an async context of their own and are left out.
 */
function recordingStores(calls: string[]) {
  return (stores: Stores): Stores => {
    const wrap = <T extends object>(name: string, store: T): T =>
      new Proxy(store, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver)
          if (typeof value !== 'function') return value
          return (...args: unknown[]) => {
            if (measured.getStore()) calls.push(`${name}.${String(property)}`)
            return value.apply(target, args)
          }
        },
      })
    return {
      ...stores,
      users: wrap('users', stores.users),
      sessions: wrap('sessions', stores.sessions),
      codes: wrap('codes', stores.codes),
      outbox: wrap('outbox', stores.outbox),
      sharedCounters: wrap('sharedCounters', stores.sharedCounters),
    }
  }
}

type Transport = 'smtp' | 'outbox'

/** A service on `backend` whose mail goes through `transport`, and the mailbox it arrives in. */
async function startWithMail(backend: Backend, transport: Transport, env: Record<string, string> = {}) {
  const instance = await backend.setup()
  const smtp = transport === 'smtp' ? await startSmtpServer() : null
  const calls: string[] = []
  const clock = createFixedClock(Date.now())
  const service = await startTestService(backend, {
    instance,
    clock,
    wrapStores: recordingStores(calls),
    env: { ...(smtp ? { SMTP_URL: smtp.url } : {}), MAIL_RETRY_SECONDS: '1', ...env },
  })
  const mailbox: Mailbox = smtp ? smtpMailbox(smtp) : emlMailbox(instance.env.DATA_DIR as string)
  const replies: Reply[] = []
  return {
    service,
    mailbox,
    calls,
    clock,
    /** Every answer of the test's requests, searched for codes at the end. */
    replies,
    async call(method: string, url: string, options: Parameters<typeof call>[3] = {}) {
      const reply = await call(service.app, method, url, options)
      replies.push(reply)
      return reply
    },
    async close() {
      await service.close()
      await mailbox.close()
      await smtp?.stop()
      await instance.teardown()
    },
  }
}

type Harness = Awaited<ReturnType<typeof startWithMail>>

/** The service's own code check over its store (the secret is the tests'), to see which codes are still there. */
const codeChecker = (h: Harness) =>
  createEmailCodes({
    codes: h.service.stores.codes,
    counters: h.service.stores.sharedCounters,
    // take() sends nothing
    mailer: { available: false, queue: () => Promise.reject(new Error('not for sending')) },
    config: h.service.config.codes,
    secret: TEST_SECRET,
    clock: h.clock,
    record: () => {},
  })

const sendCode = (h: Harness, email: string, purpose: string) =>
  h.call('POST', '/auth/email/send-code', { body: { email, purpose } })
const sendAccountCode = (h: Harness, accessToken: string, body: Record<string, string>) =>
  h.call('POST', '/auth/me/send-code', { body, headers: bearer(accessToken) })

/** Sends a public code and reads it from the mail. */
async function mailedCode(h: Harness, email: string, purpose: string): Promise<string> {
  const sent = await sendCode(h, email, purpose)
  expect(sent.status, sent.text).toBe(200)
  const code = codeIn(await h.mailbox.next(email))
  expect(code).toMatch(/^\d{6}$/)
  return code as string
}

const expectRefused = (reply: Reply) => {
  expect(reply.status, reply.text).toBe(400)
  expect(reply.body).toEqual({ code: 400, message: CODE_REFUSED, data: null })
}

const refresh = (h: Harness, token: string) =>
  h.call('POST', '/auth/refresh', { body: { refresh_token: token } })
const passwordLogin = (h: Harness, email: string, password = PASSWORD) =>
  h.call('POST', '/auth/login', { body: { email, password } })

// docs/api.md §4.14 to §4.21, §6.4: every flow end to end, on every backend, through a real SMTP server and through
// the development outbox
describe.each(backends)('accounts by e-mail [$name]', (backend) => {
  describe.each(['smtp', 'outbox'] as const)('mail through %s', (transport) => {
    let h: Harness
    const codesSeen = new Set<string>()
    const keysSeen = new Set<string>()
    const read = async (email: string): Promise<ReceivedMail> => {
      const mail = await h.mailbox.next(email)
      const code = codeIn(mail)
      if (code) codesSeen.add(code)
      return mail
    }
    const code = async (email: string, purpose: string) => {
      const value = await mailedCode(h, email, purpose)
      codesSeen.add(value)
      return value
    }

    beforeAll(async () => {
      h = await startWithMail(backend, transport)
    })
    afterAll(() => h?.close())

    it('R4.3.3 registers with a code: the address is verified; the code works once', async () => {
      const email = uniqueEmail()
      const verificationCode = await code(email, 'register')
      const body = { email, password: PASSWORD, verification_code: verificationCode }
      const registered = await h.call('POST', '/auth/register', { body })
      expect(registered.status, registered.text).toBe(200)
      expect(registered.body.data).toMatchObject({ email, email_verified: true })
      expect(registered.body.data.id).toMatch(/^[1-9]\d{9}$/)
      const me = await h.call('GET', '/auth/me', { headers: bearer(registered.body.data.access_token) })
      expect(me.body.data).toMatchObject({
        id: registered.body.data.id,
        email,
        email_verified: true,
        password_set: true,
        created_at: registered.body.data.created_at,
      })
      // used up: a second registration with it is refused before the address is looked up
      expectRefused(await h.call('POST', '/auth/register', { body }))
      // without a code, as the specification has it: unverified
      const plain = await h.call('POST', '/auth/register', {
        body: { email: uniqueEmail(), password: PASSWORD },
      })
      expect(plain.body.data.email_verified).toBe(false)
    })

    it('R4.14.4 a register code to a taken address mails that it is taken, with no code', async () => {
      const user = await registerUser(h.service.app)
      expect((await sendCode(h, user.email, 'register')).status).toBe(200)
      const mail = await read(user.email)
      expect(codeIn(mail)).toBeNull()
      expect(mail.text.toLowerCase()).toContain('already')
    })

    it('R4.16.1 signs in with a code; a wrong, used or unknown one is the 401 of a wrong password', async () => {
      const user = await registerUser(h.service.app)
      const loginCode = await code(user.email, 'login')
      const wrong = loginCode === '000000' ? '000001' : '000000'
      const refused = await h.call('POST', '/auth/login/email-code', {
        body: { email: user.email, verification_code: wrong },
      })
      expect(refused.status).toBe(401)
      expect(refused.body.message).toBe(MESSAGES.invalidCredentials)
      const body = { email: user.email, verification_code: loginCode }
      const signedIn = await h.call('POST', '/auth/login/email-code', { body })
      expect(signedIn.status, signedIn.text).toBe(200)
      expect(signedIn.body.data).toMatchObject({ id: user.id, email: user.email, email_verified: true })
      expect((await refresh(h, signedIn.body.data.refresh_token)).status).toBe(200)
      const again = await h.call('POST', '/auth/login/email-code', { body })
      expect(again.status).toBe(401)
      expect(again.body).toEqual(refused.body)
      const unknown = await h.call('POST', '/auth/login/email-code', {
        body: { email: uniqueEmail(), verification_code: loginCode },
      })
      expect(unknown.body).toEqual(refused.body)
    })

    it("R4.15.1 the owner's proof ends the impostor's password and sessions", async () => {
      // the impostor registers the owner's address with a password, and no code
      const impostor = await registerUser(h.service.app)
      expect(impostor.accessToken).toBeTruthy()
      const ownerCode = await code(impostor.email, 'login')
      const owner = await h.call('POST', '/auth/login/email-code', {
        body: { email: impostor.email, verification_code: ownerCode },
      })
      expect(owner.status, owner.text).toBe(200)
      expect(owner.body.data.email_verified).toBe(true)
      // the password set before the proof fails as a wrong one would, and the impostor's refresh token is refused
      const login = await passwordLogin(h, impostor.email)
      expect(login.status).toBe(401)
      expect(login.body.message).toBe(MESSAGES.invalidCredentials)
      expect((await refresh(h, impostor.refreshToken)).status).toBe(401)
      // the owner goes on
      expect((await refresh(h, owner.body.data.refresh_token)).status).toBe(200)
      await h.service.flushAudit()
      const events = await h.service.stores.audit.list({ userId: impostor.id })
      expect(events.map((event) => [event.type, event.reason])).toContainEqual(['email_verified', 'claimed'])
      // a reset gives the owner a password
      const resetCode = await code(impostor.email, 'reset_password')
      const reset = await h.call('POST', '/auth/password/reset', {
        body: { email: impostor.email, verification_code: resetCode, new_password: NEW_PASSWORD },
      })
      expect(reset.status, reset.text).toBe(200)
      expect((await passwordLogin(h, impostor.email, NEW_PASSWORD)).status).toBe(200)
    })

    it('R4.15.3 a sign-in code on a verified account ends nothing', async () => {
      const email = uniqueEmail()
      const registered = await h.call('POST', '/auth/register', {
        body: { email, password: PASSWORD, verification_code: await code(email, 'register') },
      })
      const signedIn = await h.call('POST', '/auth/login/email-code', {
        body: { email, verification_code: await code(email, 'login') },
      })
      expect(signedIn.status).toBe(200)
      expect((await passwordLogin(h, email)).status).toBe(200)
      // single mode: the code login replaced the registration's session, as any login does
      expect((await refresh(h, registered.body.data.refresh_token)).status).toBe(401)
    })

    it('R4.17.1 a reset sets the password, ends every session, answers a login and mails a notice', async () => {
      const user = await registerUser(h.service.app)
      const resetCode = await code(user.email, 'reset_password')
      const reset = await h.call('POST', '/auth/password/reset', {
        body: { email: user.email, verification_code: resetCode, new_password: NEW_PASSWORD },
      })
      expect(reset.status, reset.text).toBe(200)
      expect(reset.body.data).toMatchObject({ id: user.id, email: user.email, email_verified: true })
      expect((await refresh(h, user.refreshToken)).status).toBe(401)
      expect((await refresh(h, reset.body.data.refresh_token)).status).toBe(200)
      expect((await passwordLogin(h, user.email)).status).toBe(401)
      expect((await passwordLogin(h, user.email, NEW_PASSWORD)).status).toBe(200)
      const notice = await read(user.email)
      expect(codeIn(notice)).toBeNull()
      expect(notice.html).not.toBe('')
      // the code is used up
      expectRefused(
        await h.call('POST', '/auth/password/reset', {
          body: { email: user.email, verification_code: resetCode, new_password: 'yet another one' },
        }),
      )
    })

    it('R4.17.1 a reset with the reset key of the mail: the same answer as with its code, and the key works once', async () => {
      const user = await registerUser(h.service.app)
      const sent = await sendCode(h, user.email, 'reset_password')
      expect(sent.status, sent.text).toBe(200)
      const mail = await read(user.email)
      const key = resetKeyIn(mail) as string
      expect(key).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){6}$/)
      keysSeen.add(key)
      const reset = await h.call('POST', '/auth/password/reset', {
        body: { email: user.email, verification_code: key, new_password: NEW_PASSWORD },
      })
      expect(reset.status, reset.text).toBe(200)
      expect(reset.body.data).toMatchObject({ id: user.id, email: user.email, email_verified: true })
      expect((await refresh(h, user.refreshToken)).status).toBe(401)
      expect((await passwordLogin(h, user.email, NEW_PASSWORD)).status).toBe(200)
      expect(codeIn(await read(user.email))).toBeNull()
      // used up, and the code with it
      for (const used of [key, codeIn(mail) as string]) {
        expectRefused(
          await h.call('POST', '/auth/password/reset', {
            body: { email: user.email, verification_code: used, new_password: 'yet another one' },
          }),
        )
      }
    })

    it('R4.14.3 five tries per code: the sixth is refused even when right', async () => {
      const user = await registerUser(h.service.app)
      const resetCode = await code(user.email, 'reset_password')
      const wrong = resetCode === '999999' ? '999998' : '999999'
      const reset = (verificationCode: string) =>
        h.call('POST', '/auth/password/reset', {
          body: { email: user.email, verification_code: verificationCode, new_password: NEW_PASSWORD },
        })
      for (let i = 0; i < 5; i++) expectRefused(await reset(wrong))
      expectRefused(await reset(resetCode))
      expect((await passwordLogin(h, user.email)).status).toBe(200)
    })

    it('R4.14.2 a code expires, and is good for its own purpose only', async () => {
      const user = await registerUser(h.service.app)
      const loginCode = await code(user.email, 'login')
      // a login code is no reset code
      expectRefused(
        await h.call('POST', '/auth/password/reset', {
          body: { email: user.email, verification_code: loginCode, new_password: NEW_PASSWORD },
        }),
      )
      const resetCode = await code(user.email, 'reset_password')
      h.clock.advance(h.service.config.codes.ttlSeconds * 1000 + 1)
      expectRefused(
        await h.call('POST', '/auth/password/reset', {
          body: { email: user.email, verification_code: resetCode, new_password: NEW_PASSWORD },
        }),
      )
    })

    it('R4.14.4 an unknown address: the same answer, the same store calls, and no mail', async () => {
      const known = await registerUser(h.service.app)
      const drained = () =>
        expect.poll(() => h.service.stores.outbox.stats('mail').then((s) => s.queued)).toBe(0)
      for (const purpose of ['login', 'reset_password']) {
        // measured while the sender is idle: its own calls (a claim, the account it looks up to decide what a code's
        // mail says) come only after the request's enqueue, which ends what is compared
        const work = async (email: string) => {
          await drained()
          h.calls.length = 0
          const reply = await measured.run(true, () => sendCode(h, email, purpose))
          const requestCalls = h.calls.filter((name) => !SENDER_ONLY.has(name))
          const end = requestCalls.indexOf('outbox.enqueue')
          expect(end, h.calls.join()).toBeGreaterThan(-1)
          return { reply, calls: requestCalls.slice(0, end + 1) }
        }
        const knownWork = await work(known.email)
        await read(known.email)
        const unknown = uniqueEmail()
        const unknownWork = await work(unknown)
        expect(unknownWork.reply.status).toBe(200)
        expect(unknownWork.reply.text).toBe(knownWork.reply.text)
        expect(unknownWork.calls).toEqual(knownWork.calls)
        expect(unknownWork.calls).toEqual([
          'sharedCounters.increment',
          'sharedCounters.increment',
          'codes.put',
          'outbox.enqueue',
        ])
        // the unknown address's mail was decided at delivery and never sent
        await drained()
        expect(h.mailbox.mails.filter((mail) => mail.to === unknown)).toEqual([])
      }
    })

    it('R8.9 one send per address and purpose per EMAIL_CODE_RESEND_SECONDS: 429 with Retry-After', async () => {
      const email = uniqueEmail()
      expect((await sendCode(h, email, 'login')).status).toBe(200)
      const again = await sendCode(h, email, 'login')
      expect(again.status).toBe(429)
      const retryAfter = Number(again.headers['retry-after'])
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(60)
      // another purpose has a budget of its own
      expect((await sendCode(h, email, 'reset_password')).status).toBe(200)
    })

    it('R4.18.1 a password change ends the other sessions and answers the one the client goes on with', async () => {
      const user = await registerUser(h.service.app)
      const wrong = await h.call('POST', '/auth/password/change', {
        headers: bearer(user.accessToken),
        body: { current_password: 'not the password', new_password: NEW_PASSWORD },
      })
      expect(wrong.status).toBe(400)
      expect(wrong.body.message).toBe('Password is incorrect')
      const changed = await h.call('POST', '/auth/password/change', {
        headers: bearer(user.accessToken),
        body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
      })
      expect(changed.status, changed.text).toBe(200)
      expect(changed.body.data).toMatchObject({ id: user.id, email: user.email })
      expect((await refresh(h, user.refreshToken)).status).toBe(401)
      expect((await refresh(h, changed.body.data.refresh_token)).status).toBe(200)
      expect((await passwordLogin(h, user.email)).status).toBe(401)
      expect((await passwordLogin(h, user.email, NEW_PASSWORD)).status).toBe(200)
      expect(codeIn(await read(user.email))).toBeNull()
    })

    it('R4.19.1 changes the address with a code sent to the new one; the old one is told', async () => {
      const user = await registerUser(h.service.app)
      const taken = await registerUser(h.service.app)
      const newEmail = uniqueEmail()
      const missing = await sendAccountCode(h, user.accessToken, { purpose: 'change_email' })
      expect(missing.status).toBe(400)
      expect(missing.body.data.errors[0].field).toBe('/new_email')
      expect(
        (await sendAccountCode(h, user.accessToken, { purpose: 'change_email', new_email: newEmail })).status,
      ).toBe(200)
      const changeCode = codeIn(await read(newEmail)) as string
      codesSeen.add(changeCode)
      // the code is bound to the address it was sent to
      expectRefused(
        await h.call('POST', '/auth/email/change', {
          headers: bearer(user.accessToken),
          body: { new_email: taken.email, verification_code: changeCode },
        }),
      )
      const changed = await h.call('POST', '/auth/email/change', {
        headers: bearer(user.accessToken),
        body: { new_email: newEmail, verification_code: changeCode },
      })
      expect(changed.status, changed.text).toBe(200)
      expect(changed.body.data).toMatchObject({ id: user.id, email: newEmail, email_verified: true })
      const notice = await read(user.email)
      expect(notice.text).toContain(newEmail)
      const loggedIn = await passwordLogin(h, newEmail)
      expect(loggedIn.status).toBe(200)
      expect((await passwordLogin(h, user.email)).status).toBe(401)
      // that login replaced the session of user.accessToken (single mode): the client goes on with its tokens
      const token = loggedIn.body.data.access_token
      // another account's address, proved: 409
      expect(
        (await sendAccountCode(h, token, { purpose: 'change_email', new_email: taken.email })).status,
      ).toBe(200)
      const takenCode = codeIn(await read(taken.email)) as string
      codesSeen.add(takenCode)
      const conflict = await h.call('POST', '/auth/email/change', {
        headers: bearer(token),
        body: { new_email: taken.email, verification_code: takenCode },
      })
      expect(conflict.status).toBe(409)
    })

    it('R4.20.1 verifies the address of a signed-in account without ending anything', async () => {
      const user = await registerUser(h.service.app)
      expect((await sendAccountCode(h, user.accessToken, { purpose: 'verify_email' })).status).toBe(200)
      const verifyCode = codeIn(await read(user.email)) as string
      codesSeen.add(verifyCode)
      expectRefused(
        await h.call('POST', '/auth/email/verify', {
          headers: bearer(user.accessToken),
          body: { verification_code: verifyCode === '123456' ? '654321' : '123456' },
        }),
      )
      const verified = await h.call('POST', '/auth/email/verify', {
        headers: bearer(user.accessToken),
        body: { verification_code: verifyCode },
      })
      expect(verified.status, verified.text).toBe(200)
      expect(verified.body.data).toMatchObject({ id: user.id, email_verified: true })
      expect((await passwordLogin(h, user.email)).status).toBe(200)
    })

    it('R4.21.1 deletes the account by password or by code, with its sessions and codes', async () => {
      const byPassword = await registerUser(h.service.app)
      const wrong = await h.call('POST', '/auth/delete', {
        headers: bearer(byPassword.accessToken),
        body: { password: 'not the password' },
      })
      expect(wrong.status).toBe(400)
      expect(wrong.body.message).toBe('Password is incorrect')
      const neither = await h.call('POST', '/auth/delete', {
        headers: bearer(byPassword.accessToken),
        body: {},
      })
      expect(neither.status).toBe(400)
      // a code asked for and never used goes with the account; another account's stays
      const survivor = await registerUser(h.service.app)
      const pendingCode = async (user: { accessToken: string; email: string }) => {
        expect((await sendAccountCode(h, user.accessToken, { purpose: 'verify_email' })).status).toBe(200)
        const pending = codeIn(await read(user.email)) as string
        codesSeen.add(pending)
        return pending
      }
      const orphan = await pendingCode(byPassword)
      const kept = await pendingCode(survivor)
      const deleted = await h.call('POST', '/auth/delete', {
        headers: bearer(byPassword.accessToken),
        body: { password: PASSWORD },
      })
      expect(deleted.status, deleted.text).toBe(200)
      expect(deleted.body).toEqual({ code: 200, message: 'Success', data: null })
      expect((await passwordLogin(h, byPassword.email)).status).toBe(401)
      expect((await refresh(h, byPassword.refreshToken)).status).toBe(401)
      expect((await h.call('GET', '/auth/me', { headers: bearer(byPassword.accessToken) })).status).toBe(401)
      expect(await h.service.stores.users.findById(byPassword.id)).toBeNull()
      const codes = codeChecker(h)
      const verifyKey = (user: { email: string; id: string }) =>
        ({ address: user.email, purpose: 'verify_email', userId: user.id }) as const
      expect(await codes.take(verifyKey(byPassword), orphan, OFF_HTTP)).toBe(false)
      expect(await codes.take(verifyKey(survivor), kept, OFF_HTTP)).toBe(true)

      const byCode = await registerUser(h.service.app)
      expect((await sendAccountCode(h, byCode.accessToken, { purpose: 'delete_account' })).status).toBe(200)
      const deleteCode = codeIn(await read(byCode.email)) as string
      codesSeen.add(deleteCode)
      const gone = await h.call('POST', '/auth/delete', {
        headers: bearer(byCode.accessToken),
        body: { verification_code: deleteCode },
      })
      expect(gone.status, gone.text).toBe(200)
      expect(await h.service.stores.users.findById(byCode.id)).toBeNull()
      await h.service.flushAudit()
      const events = await h.service.stores.audit.list({ userId: byCode.id })
      expect(events.at(-1)).toMatchObject({ type: 'account_deleted', reason: null, clientAddress: null })
    })

    it('no code or reset key appears in any answer or log line', async () => {
      expect(codesSeen.size).toBeGreaterThan(5)
      const answers = h.replies.map((reply) => reply.text).join('\n')
      const logs = h.service.logLines.join('\n')
      // a code as it would be written: on its own, not six digits inside a time, an id or a hexadecimal value
      for (const seen of codesSeen) {
        const written = new RegExp(`(?<![0-9A-Za-z])${seen}(?![0-9A-Za-z])`)
        expect(answers).not.toMatch(written)
        expect(logs).not.toMatch(written)
      }
      // nor any reset key, in any form it is read in: its groups, whatever joins them
      expect(keysSeen.size).toBeGreaterThan(0)
      for (const seen of keysSeen) {
        const groups = seen.split('-')
        const written = new RegExp(groups.join('[^0-9A-Za-z]?'), 'i')
        expect(answers).not.toMatch(written)
        expect(logs).not.toMatch(written)
      }
    })
  })
})

/**
 * Ends the quarter of an hour of `email`'s send budget for `purpose` (docs/api.md R8.9): the service clock is moved
 * past it; where the counters are in Redis, which counts their windows by its own clock, the counter is removed, as
 * its expiry at the window's end would (after checking that it would end within the quarter of an hour).
 */
async function endSendWindow(h: Harness, email: string, purpose: string) {
  h.clock.advance(15 * 60_000)
  const { redisUrl, redisKeyPrefix } = h.service.config.storage
  if (redisUrl === null) return
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
  await redis.connect()
  try {
    const counter = `${redisKeyPrefix}rate-limit:code-sends:${purpose}:${email}`
    const left = await redis.pttl(counter)
    expect(left).toBeGreaterThan(0)
    expect(left).toBeLessThanOrEqual(15 * 60_000)
    await redis.del(counter)
  } finally {
    redis.disconnect()
  }
}

// docs/api.md R8.9 and R4.14.2, issue 31: what one stranger's sends to an address leave its owner, on every backend:
// the counters in Redis with REDIS_URL and in SQL without it, the codes in SQL. No resend interval, so that the
// budgets alone are what a test meets, on any clock
describe.each(backends)('code budgets and codes of one key [$name]', (backend) => {
  let h: Harness
  beforeAll(async () => {
    h = await startWithMail(backend, 'outbox', { EMAIL_CODE_RESEND_SECONDS: '0' })
  })
  afterAll(() => h?.close())

  /**
   * Sends a public code to `email` and reads it from its mail (passing over the notices of resets before it), so that
   * the codes of a test are in sending order.
   */
  const sentCode = async (email: string, purpose: string) => {
    const sent = await sendCode(h, email, purpose)
    expect(sent.status, sent.text).toBe(200)
    for (;;) {
      const value = codeIn(await h.mailbox.next(email))
      if (value !== null) return value
    }
  }
  const reset = (email: string, verificationCode: string, password = NEW_PASSWORD) =>
    h.call('POST', '/auth/password/reset', {
      body: { email, verification_code: verificationCode, new_password: password },
    })
  const otherThan = (...codes: string[]) =>
    ['000000', '000001', '000002', '000003'].find((guess) => !codes.includes(guess)) as string
  /**
   * Sends a reset to `email` and reads its mail (passing over notices): the code, and the reset key beside it (null
   * when the mail shows none).
   */
  const sentReset = async (email: string) => {
    const sent = await sendCode(h, email, 'reset_password')
    expect(sent.status, sent.text).toBe(200)
    for (;;) {
      const mail = await h.mailbox.next(email)
      const code = codeIn(mail)
      if (code !== null) return { code, key: resetKeyIn(mail) }
    }
  }
  /** The `code_refused` events of resets logged so far (each refusal is recorded, docs/api.md R4.14.5). */
  const resetRefusals = () =>
    h.service.logs().filter((line) => line.event === 'code_refused' && line.reason === 'reset_password')
      .length

  it('R8.9 ten register and login sends to an address leave its reset_password and verify_email sends as they were', async () => {
    const owner = await registerUser(h.service.app)
    const statuses: Record<string, number[]> = { register: [], login: [] }
    for (let i = 0; i < 10; i++) {
      const purpose = i % 2 === 0 ? 'register' : 'login'
      statuses[purpose]?.push((await sendCode(h, owner.email, purpose)).status)
    }
    expect((await sendCode(h, owner.email, 'reset_password')).status).toBe(200)
    const verify = await sendAccountCode(h, owner.accessToken, { purpose: 'verify_email' })
    expect(verify.status, verify.text).toBe(200)
    // each purpose has a budget of its own: three sends in a quarter of an hour
    expect(statuses).toEqual({ register: [200, 200, 200, 429, 429], login: [200, 200, 200, 429, 429] })
  })

  it('R8.9 a stranger who spent the reset budget leaves the owner codes that work, and a send of their own within a quarter of an hour', async () => {
    const owner = await registerUser(h.service.app)
    // the stranger's three sends: each mails the owner a code, none replaces another
    const mailed = [
      await sentCode(owner.email, 'reset_password'),
      await sentCode(owner.email, 'reset_password'),
      await sentCode(owner.email, 'reset_password'),
    ]
    const refused = await sendCode(h, owner.email, 'reset_password')
    expect(refused.status).toBe(429)
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(15 * 60)
    // the owner resets with the first code in the mailbox
    const done = await reset(owner.email, mailed[0] as string)
    expect(done.status, done.text).toBe(200)
    expect((await passwordLogin(h, owner.email, NEW_PASSWORD)).status).toBe(200)
    // and once the quarter of an hour ends, sends one again
    await endSendWindow(h, owner.email, 'reset_password')
    const again = await sentCode(owner.email, 'reset_password')
    expect((await reset(owner.email, again, 'yet another password')).status).toBe(200)
  })

  it('R8.9 a stranger who spends the reset budget and makes five wrong tries after every send, quarter after quarter, keeps the owner from no reset: the reset key of the latest mail works', async () => {
    const owner = await registerUser(h.service.app)
    const budget = sendBudget(h.service.config.codes.hourlyLimit)
    let password = PASSWORD
    const keys: string[] = []
    for (let quarter = 1; quarter <= 3; quarter++) {
      // the stranger: every send of the quarter's budget, each followed by five wrong tries, which use up every code
      // of the key; each send mails the owner a code and a reset key
      let latest = { code: '', key: null as string | null }
      for (let send = 0; send < budget; send++) {
        latest = await sentReset(owner.email)
        const wrong = otherThan(latest.code)
        for (let i = 0; i < 5; i++) expectRefused(await reset(owner.email, wrong))
      }
      // the budget is spent: the owner cannot send one of their own this quarter
      expect((await sendCode(h, owner.email, 'reset_password')).status).toBe(429)
      // the owner's latest mail: its code was used up by the stranger's tries, its reset key was not
      expectRefused(await reset(owner.email, latest.code, 'an owner password'))
      expect(latest.key, 'the reset mail shows a reset key').not.toBeNull()
      const key = latest.key as string
      keys.push(key)
      const chosen = `owner password ${quarter}`
      const done = await reset(owner.email, key, chosen)
      expect(done.status, done.text).toBe(200)
      expect(done.body.data.id).toBe(owner.id)
      expect((await passwordLogin(h, owner.email, chosen)).status).toBe(200)
      expect((await passwordLogin(h, owner.email, password)).status).toBe(401)
      password = chosen
      // the right key used up the reset's codes and keys
      expectRefused(await reset(owner.email, key, 'a stranger password'))
      await endSendWindow(h, owner.email, 'reset_password')
    }
    // no key was logged
    const logs = h.service.logLines.join('\n')
    for (const key of keys) expect(logs).not.toContain(key.replaceAll('-', '').slice(0, 12))
    for (const key of keys) expect(logs).not.toContain(key.slice(0, 14))
  })

  it('R8.9 the longest an owner waits: keys expire with their codes, and the budget is back within the quarter of an hour', async () => {
    const owner = await registerUser(h.service.app)
    let latest = { code: '', key: null as string | null }
    for (let send = 0; send < sendBudget(h.service.config.codes.hourlyLimit); send++) {
      latest = await sentReset(owner.email)
      for (let i = 0; i < 5; i++) expectRefused(await reset(owner.email, otherThan(latest.code)))
    }
    // the codes' time is over before the quarter is: the reset key is refused with them
    h.clock.advance(h.service.config.codes.ttlSeconds * 1000 + 1)
    expectRefused(await reset(owner.email, latest.key as string))
    const refused = await sendCode(h, owner.email, 'reset_password')
    expect(refused.status).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(15 * 60)
    // once the quarter ends, whoever sends first, the owner has a key that works
    await endSendWindow(h, owner.email, 'reset_password')
    const mine = await sentReset(owner.email)
    for (let i = 0; i < 5; i++) expectRefused(await reset(owner.email, otherThan(mine.code)))
    expect((await reset(owner.email, mine.key as string)).status).toBe(200)
    expect((await passwordLogin(h, owner.email, NEW_PASSWORD)).status).toBe(200)
  })

  it('R4.17 a wrong reset key uses up nothing: after 100 of them, each refused and recorded, the code has every try', async () => {
    const owner = await registerUser(h.service.app)
    const { code, key } = await sentReset(owner.email)
    const before = resetRefusals()
    // 140 random bits each: none is the owner's
    for (let i = 0; i < 100; i++) expectRefused(await reset(owner.email, newResetKey()))
    await expect.poll(resetRefusals).toBe(before + 100)
    // a wrong key counted no try: four wrong codes still leave the code good
    for (let i = 0; i < 4; i++) expectRefused(await reset(owner.email, otherThan(code)))
    expect((await reset(owner.email, code)).status).toBe(200)
    expect((await passwordLogin(h, owner.email, NEW_PASSWORD)).status).toBe(200)
    // the right code used up the reset key too
    expectRefused(await reset(owner.email, key as string, 'yet another password'))
  })

  it("R4.17 a reset key works once and for its own address only; each send's key is good beside the others", async () => {
    const owner = await registerUser(h.service.app)
    const other = await registerUser(h.service.app)
    const first = await sentReset(owner.email)
    const second = await sentReset(owner.email)
    const theirs = await sentReset(other.email)
    // another address's key is refused, and takes nothing from either address
    expectRefused(await reset(owner.email, theirs.key as string))
    // the key of an earlier mail is as good as the latest's
    expect((await reset(owner.email, first.key as string)).status).toBe(200)
    for (const used of [first.key, second.key, second.code]) {
      expectRefused(await reset(owner.email, used as string, 'yet another password'))
    }
    expect((await passwordLogin(h, owner.email, NEW_PASSWORD)).status).toBe(200)
    // a key typed by hand: lower case, spaces for hyphens, an O for a 0 and an l for a 1
    const typed = (theirs.key as string)
      .toLowerCase()
      .replaceAll('-', ' ')
      .replaceAll('0', 'O')
      .replaceAll('1', 'l')
    expect((await reset(other.email, `  ${typed} `)).status).toBe(200)
    expect((await passwordLogin(h, other.email, NEW_PASSWORD)).status).toBe(200)
  })

  it('R4.14.2 a new code leaves the one sent before it good', async () => {
    const owner = await registerUser(h.service.app)
    const first = await sentCode(owner.email, 'login')
    await sentCode(owner.email, 'login')
    const signedIn = await h.call('POST', '/auth/login/email-code', {
      body: { email: owner.email, verification_code: first },
    })
    expect(signedIn.status, signedIn.text).toBe(200)
  })

  it("R4.14.2 a right code uses up the key's other codes, and no other key's", async () => {
    const owner = await registerUser(h.service.app)
    const first = await sentCode(owner.email, 'reset_password')
    const second = await sentCode(owner.email, 'reset_password')
    const login = await sentCode(owner.email, 'login')
    expect((await reset(owner.email, first)).status).toBe(200)
    expectRefused(await reset(owner.email, second, 'yet another password'))
    const signedIn = await h.call('POST', '/auth/login/email-code', {
      body: { email: owner.email, verification_code: login },
    })
    expect(signedIn.status, signedIn.text).toBe(200)
  })

  it('R4.14.3 a wrong try counts on every code of the key: after four, each one works; after five, none', async () => {
    const owner = await registerUser(h.service.app)
    const codes = [
      await sentCode(owner.email, 'reset_password'),
      await sentCode(owner.email, 'reset_password'),
    ]
    const wrong = otherThan(...codes)
    for (let i = 0; i < 4; i++) expectRefused(await reset(owner.email, wrong))
    expect((await reset(owner.email, codes[0] as string)).status).toBe(200)

    await endSendWindow(h, owner.email, 'reset_password')
    const next = [
      await sentCode(owner.email, 'reset_password'),
      await sentCode(owner.email, 'reset_password'),
    ]
    const guess = otherThan(...next)
    for (let i = 0; i < 5; i++) expectRefused(await reset(owner.email, guess, 'yet another password'))
    for (const used of next) expectRefused(await reset(owner.email, used, 'yet another password'))
    expect((await passwordLogin(h, owner.email, NEW_PASSWORD)).status).toBe(200)
  })
})

describe('codes in the other modes', () => {
  const backend = backends[0] as Backend

  it('R4.3.3 AUTH_REGISTER_CODE=required: no account without a right code, checked before the address', async () => {
    const h = await startWithMail(backend, 'outbox', { AUTH_REGISTER_CODE: 'required' })
    try {
      const email = uniqueEmail()
      const missing = await h.call('POST', '/auth/register', { body: { email, password: PASSWORD } })
      expect(missing.status).toBe(400)
      expect(missing.body.data.errors[0].field).toBe('/verification_code')
      const verificationCode = await mailedCode(h, email, 'register')
      const registered = await h.call('POST', '/auth/register', {
        body: { email, password: PASSWORD, verification_code: verificationCode },
      })
      expect(registered.status, registered.text).toBe(200)
      // a taken address and a free one answer alike to whoever has no code for them
      const guess = verificationCode === '111111' ? '222222' : '111111'
      const taken = await h.call('POST', '/auth/register', {
        body: { email, password: PASSWORD, verification_code: guess },
      })
      const free = await h.call('POST', '/auth/register', {
        body: { email: uniqueEmail(), password: PASSWORD, verification_code: guess },
      })
      expectRefused(taken)
      expect(free.body).toEqual(taken.body)
    } finally {
      await h.close()
    }
  })

  it('R4.17.3 PASSWORD_RESET_URL: the reset mail carries a link with the reset key and the address', async () => {
    const h = await startWithMail(backend, 'outbox', {
      PASSWORD_RESET_URL: 'https://app.example/reset#key={key}&email={email}',
    })
    try {
      const user = await registerUser(h.service.app)
      expect((await sendCode(h, user.email, 'reset_password')).status).toBe(200)
      const mail = await h.mailbox.next(user.email)
      const key = resetKeyIn(mail) as string
      const link = `https://app.example/reset#key=${key}&email=${encodeURIComponent(user.email)}`
      expect(mail.text).toContain(link)
      expect(mail.html).toContain(`<a href="${link.replace('&', '&amp;')}"`)
      // what the application does with it: the key and the address from the link, into the reset
      const fragment = new URLSearchParams(new URL(link).hash.slice(1))
      const reset = await h.call('POST', '/auth/password/reset', {
        body: {
          email: fragment.get('email'),
          verification_code: fragment.get('key'),
          new_password: NEW_PASSWORD,
        },
      })
      expect(reset.status, reset.text).toBe(200)
      expect(reset.body.data.id).toBe(user.id)
    } finally {
      await h.close()
    }
  })

  it('R8.9 a quarter of EMAIL_CODE_HOURLY_LIMIT per address and purpose in a quarter of an hour; a send the resend interval refused does not count', async () => {
    // 5 an hour: 2 in each quarter of an hour
    const h = await startWithMail(backend, 'outbox', { EMAIL_CODE_HOURLY_LIMIT: '5' })
    try {
      const email = uniqueEmail()
      expect((await sendCode(h, email, 'login')).status).toBe(200)
      expect((await sendCode(h, email, 'login')).status).toBe(429)
      h.clock.advance(60_000)
      expect((await sendCode(h, email, 'login')).status).toBe(200)
      h.clock.advance(60_000)
      const third = await sendCode(h, email, 'login')
      expect(third.status).toBe(429)
      // the quarter of an hour that the first send opened: 13 minutes to go
      expect(Number(third.headers['retry-after'])).toBe(13 * 60)
      // another purpose, and another address, have budgets of their own
      expect((await sendCode(h, email, 'reset_password')).status).toBe(200)
      expect((await sendCode(h, uniqueEmail(), 'login')).status).toBe(200)
      h.clock.advance(13 * 60_000)
      expect((await sendCode(h, email, 'login')).status).toBe(200)
    } finally {
      await h.close()
    }
  })

  it("R4.18.2 wrong current passwords count against the account's backoff: past it, 429 before any check", async () => {
    const h = await startWithMail(backend, 'outbox', { AUTH_LOGIN_BACKOFF_AFTER: '2' })
    try {
      const user = await registerUser(h.service.app)
      const change = (current: string) =>
        h.call('POST', '/auth/password/change', {
          headers: bearer(user.accessToken),
          body: { current_password: current, new_password: NEW_PASSWORD },
        })
      // the address that registered is remembered for the account (R8.6): it has failures of its own to spend first;
      // the service's clock stands still, so the backoff's wait never runs out
      const statuses: number[] = []
      for (let i = 0; i < 10 && statuses.at(-1) !== 429; i++)
        statuses.push((await change(`wrong ${i}`)).status)
      expect(statuses.at(-1)).toBe(429)
      expect(statuses.slice(0, -1).every((status) => status === 400)).toBe(true)
      // refused before any check: the right password is not even looked at, and nothing changes
      const before = await h.service.stores.users.findById(user.id)
      expect((await change(PASSWORD)).status).toBe(429)
      expect(await h.service.stores.users.findById(user.id)).toEqual(before)
    } finally {
      await h.close()
    }
  })

  it('R4.14.7 production without SMTP_URL: the code endpoints answer 503, and the start says so', async () => {
    const h = await startWithMail(backend, 'outbox', { NODE_ENV: 'production' })
    try {
      const reply = await sendCode(h, uniqueEmail(), 'login')
      expect(reply.status).toBe(503)
      expect(reply.body).toEqual({
        code: 503,
        message: 'E-mail is not configured on this server (SMTP_URL)',
        data: null,
      })
      expect(h.service.logLines.join('\n')).toMatch(/SMTP_URL/)
    } finally {
      await h.close()
    }
  })

  it('R4.18.1 per device: a password change ends every other session and keeps the caller signed in', async () => {
    const h = await startWithMail(backend, 'outbox', { AUTH_SESSIONS: 'per-device' })
    try {
      const user = await registerUser(h.service.app)
      const other = await passwordLogin(h, user.email)
      const changed = await h.call('POST', '/auth/password/change', {
        headers: bearer(user.accessToken),
        body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
      })
      expect(changed.status, changed.text).toBe(200)
      expect((await refresh(h, other.body.data.refresh_token)).status).toBe(401)
      expect((await refresh(h, user.refreshToken)).status).toBe(401)
      const next = await refresh(h, changed.body.data.refresh_token)
      expect(next.status).toBe(200)
      const sessions = await h.call('GET', '/auth/sessions', { headers: bearer(next.body.data.access_token) })
      expect(sessions.body.data).toHaveLength(1)
    } finally {
      await h.close()
    }
  })
})
