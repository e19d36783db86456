import { createHmac, hkdfSync, randomInt } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { CodePurpose } from '../code-purpose.js'
import type { CodeConfig } from '../config/mail-config.js'
import { MailUnavailableError, RateLimitedError } from '../errors.js'
import type { Mailer } from '../mail/mail-intent.js'
import type { RecordSecurityEvent, RequestContext } from '../security-event.js'
import type { CodeKey, EmailCodeStore, RateCounterStore } from '../storage/stores.js'
import { newResetKey, readResetKey } from './reset-key.js'

/** A code's length: six digits, what people type from a mail on another device without error. */
const CODE_DIGITS = 6
/** Tries of one code, right or wrong; the sixth, even with the right code, is refused (docs/api.md §4.14). */
export const CODE_MAX_TRIES = 5
/**
 * The send budget's window: a quarter of an hour, the longest a stranger who spends an address's budget for a purpose
 * keeps its owner from sending one (docs/api.md R8.9).
 */
const SEND_WINDOW_MS = 900_000

/** What the codes report for GET /metrics (docs/api.md §6.2); absent without METRICS_PORT. */
export interface CodeMetrics {
  codeSent(purpose: CodePurpose): void
  codeRefused(purpose: CodePurpose): void
}

export interface EmailCodesDeps {
  codes: EmailCodeStore
  /** Shared by every instance: the resend interval and the send budget hold across them. */
  counters: RateCounterStore
  mailer: Mailer
  config: CodeConfig
  /** AUTH_JWT_SECRET: the key of the codes' digests is derived from it. */
  secret: string
  clock: Clock
  record: RecordSecurityEvent
  metrics?: CodeMetrics | null
}

/**
 * One-time e-mail codes (docs/api.md §4.14): six digits, mailed through the outbox, stored only as a keyed digest,
 * single use, five tries each; a new code of a key leaves the ones sent before it good. A `reset_password` code is
 * mailed with a reset key (src/auth/reset-key.ts), stored beside it the same way, which wrong tries never use up.
 */
export interface EmailCodes {
  /**
   * Makes a code for `key` (with a reset key for `reset_password`), stores its digest (and the reset key's) beside
   * the key's other codes and queues its mail; resolves once the mail is committed to the outbox. Refused with
   * RateLimitedError within EMAIL_CODE_RESEND_SECONDS of the previous send of the key's address and purpose, or past
   * sendBudget(EMAIL_CODE_HOURLY_LIMIT) sends of that address and purpose in a quarter of an hour;
   * MailUnavailableError when no mail can be sent. The work never depends on whether the address has an account: the
   * sender decides what a public code's mail says (src/mail/mail-intent.ts).
   */
  send(key: CodeKey, context: RequestContext): Promise<void>
  /**
   * One try at `code` for `key`: true when it is one of the key's unexpired codes with tries left (every code of the
   * key is then used up); a wrong one counts a try on each of them. A refusal is recorded (`code_refused`), never
   * the code. Reset keys are neither checked nor touched.
   */
  take(key: CodeKey, code: string, context: RequestContext): Promise<boolean>
  /**
   * One try at the reset key `text` (as a request gives it) for `key`: true when it is the reset key of one of the
   * key's unexpired codes, whatever their tries (every code of the key is then used up, as by the right code). A
   * wrong one, or text that is no reset key, changes nothing: it counts no try. A refusal is recorded
   * (`code_refused`), never the key.
   */
  takeResetKey(key: CodeKey, text: string, context: RequestContext): Promise<boolean>
}

/**
 * The sends one address may have for one purpose in a quarter of an hour: a quarter of EMAIL_CODE_HOURLY_LIMIT,
 * rounded up (3 of the default 10), so at most four times that an hour.
 */
export const sendBudget = (hourlyLimit: number) => Math.ceil(hourlyLimit / 4)

export function createEmailCodes(deps: EmailCodesDeps): EmailCodes {
  const { codes, counters, mailer, config, clock, record } = deps
  /**
   * A digest of `secret` (a code, or a reset key) bound to its key: a code of one purpose, address or account is no
   * code of another even if a row were moved. HMAC, not a plain hash: a million codes are hashed in no time, a keyed
   * digest cannot be reversed without the secret. Codes and reset keys each have an HMAC key of their own (`info`),
   * so that a reset key is never compared with a code's digest, nor a code with a reset key's.
   */
  const keyedDigest = (info: string) => {
    const hmacKey = Buffer.from(hkdfSync('sha256', deps.secret, '', info, 32))
    return ({ address, purpose, userId }: CodeKey, secret: string) =>
      createHmac('sha256', hmacKey)
        .update(`${purpose}\0${address}\0${userId ?? ''}\0${secret}`)
        .digest('hex')
  }
  const digest = keyedDigest('tessera email codes v1')
  const resetKeyDigest = keyedDigest('tessera reset keys v1')
  const refused = (codeKey: CodeKey, context: RequestContext) => {
    record('code_refused', codeKey.userId, context, codeKey.purpose)
    deps.metrics?.codeRefused(codeKey.purpose)
  }

  /** Counts one send on `counter`; refuses it past `limit` hits in the window. */
  const limit = async (counter: string, windowMs: number, most: number) => {
    const { count, resetAfterMs } = await counters.increment(counter, windowMs)
    if (count > most) throw new RateLimitedError(Math.max(1, Math.ceil(resetAfterMs / 1000)))
  }

  return {
    async send(codeKey, context) {
      if (!mailer.available) throw new MailUnavailableError()
      const { address, purpose, userId } = codeKey
      // the resend interval first: a send it refuses does not count against the budget. Both count by address and
      // purpose, none over every purpose together: whoever spends the budget of one purpose (and only mails codes
      // that stay good to its address) leaves every other purpose of the address as it was
      if (config.resendSeconds > 0)
        await limit(`code-resend:${purpose}:${address}`, config.resendSeconds * 1000, 1)
      await limit(`code-sends:${purpose}:${address}`, SEND_WINDOW_MS, sendBudget(config.hourlyLimit))
      const code = randomInt(0, 10 ** CODE_DIGITS)
        .toString()
        .padStart(CODE_DIGITS, '0')
      const now = clock.now()
      const expiresAt = now + config.ttlSeconds * 1000
      // a reset is what a stranger's wrong tries could keep an owner from: its mail carries a second secret that
      // they cannot use up (docs/api.md R8.9)
      const resetKey = purpose === 'reset_password' ? newResetKey() : null
      const keyDigest = resetKey === null ? null : resetKeyDigest(codeKey, readResetKey(resetKey) as string)
      await codes.put(codeKey, digest(codeKey, code), expiresAt, now, keyDigest)
      const intent = {
        kind: 'code',
        purpose,
        code,
        expiresAt,
        ...(resetKey === null ? {} : { resetKey }),
      } as const
      await mailer.queue(address, intent, userId, context.language)
      record('code_sent', userId, context, purpose)
      deps.metrics?.codeSent(purpose)
    },

    async take(codeKey, code, context) {
      const taken = await codes.take(codeKey, digest(codeKey, code), clock.now(), CODE_MAX_TRIES)
      if (!taken) refused(codeKey, context)
      return taken
    },

    async takeResetKey(codeKey, text, context) {
      const resetKey = readResetKey(text)
      const taken =
        resetKey !== null &&
        (await codes.takeResetKey(codeKey, resetKeyDigest(codeKey, resetKey), clock.now()))
      if (!taken) refused(codeKey, context)
      return taken
    },
  }
}
