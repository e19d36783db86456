import type { CodePurpose } from '../storage/stores.js'

/** The notices the account flows send (docs/api.md §6.4): told, not asked. */
export const NOTICE_NAMES = [
  'password_reset',
  'password_changed',
  'email_changed',
  'provider_linked',
  'factor_added',
  'factor_removed',
] as const
export type NoticeName = (typeof NOTICE_NAMES)[number]

/**
 * What a queued message is to say, sealed in the outbox row (OutboxMessage.payload) and turned into a mail by the
 * sender when it delivers it, with the templates of that moment.
 *
 * A code of a public purpose (`register`, `login`, `reset_password`) is queued whether or not the address has an
 * account, so that the request does the same work either way (docs/api.md §4.14); the sender decides: `login` and
 * `reset_password` to an address without an account send nothing, `register` to an address that has one sends the
 * `register_taken` notice instead of the code.
 */
export type MailIntent =
  | {
      kind: 'code'
      purpose: CodePurpose
      /** Six digits, in the clear only inside the sealed payload and the mail itself. */
      code: string
      /** Epoch milliseconds: when the code stops working (the mail says for how many minutes). */
      expiresAt: number
      /**
       * `reset_password`: the reset key mailed beside the code, as the mail shows it (src/auth/reset-key.ts), in the
       * clear only inside the sealed payload and the mail itself. Absent for the other purposes, and in a reset
       * queued before reset keys were made.
       */
      resetKey?: string
    }
  | {
      kind: 'notice'
      notice: NoticeName
      /** The notice's values: `email_changed` has `new_email`, `provider_linked` has `provider`, `factor_added` and `factor_removed` have `factor` (its name). */
      values: Readonly<Record<string, string>>
    }
  /** `tessera mail test <address>`. */
  | { kind: 'test' }

/** How the account flows send mail (docs/api.md §6.4). */
export interface Mailer {
  /** False in production without SMTP_URL: nothing can be sent, and the code endpoints answer 503. */
  readonly available: boolean
  /**
   * Seals the message and commits it to the outbox; resolves once it is committed (what an answer that says it was
   * sent waits for), and wakes this process's sender. `userId` is the account it is about, if any (its deletion
   * removes the message). `language` is the one the message is written in, that of the request that caused it
   * (docs/api.md R1.18), kept with it; absent, the default language. Throws StorageError when the store fails;
   * MailUnavailableError when not `available`.
   */
  queue(to: string, intent: MailIntent, userId: string | null, language?: string): Promise<void>
}
