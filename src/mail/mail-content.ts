import { resetLink } from '../config/mail-config.js'
import type { MailIntent } from './mail-intent.js'
import { codeTemplate, type TemplateName } from './mail-templates.js'
import type { SealedMail } from './outbox-seal.js'

/** What a queued mail is written with when it is delivered; `skip` when nothing is to be sent. */
export type MailContent = { template: TemplateName; values: Record<string, string> } | 'skip'

/**
 * The choice docs/api.md §4.14 leaves to delivery, so that the request that queued a code of a public purpose did
 * the same work whether or not the address has an account (it never looked it up): a `login` or `reset_password`
 * code to an address without an account is not sent, and a `register` code to an address that has one becomes
 * the `register_taken` notice, which carries no code. `hasAccount` is asked only for those three purposes.
 * `now` (epoch ms) says how many minutes the code is still good for; `passwordResetUrl` (PASSWORD_RESET_URL) makes
 * the link of a reset mail that carries a reset key.
 */
export async function contentOf(
  mail: SealedMail,
  now: number,
  hasAccount: (email: string) => Promise<boolean>,
  passwordResetUrl: string | null,
): Promise<MailContent> {
  const { to, intent } = mail
  switch (intent.kind) {
    case 'code': {
      if (intent.purpose === 'login' || intent.purpose === 'reset_password')
        return (await hasAccount(to)) ? codeContent(to, intent, now, passwordResetUrl) : 'skip'
      if (intent.purpose === 'register' && (await hasAccount(to)))
        return { template: 'register_taken', values: { email: to } }
      return codeContent(to, intent, now, passwordResetUrl)
    }
    case 'notice':
      return { template: intent.notice, values: { ...intent.values, email: to } }
    case 'test':
      return { template: 'test', values: { email: to } }
  }
}

function codeContent(
  to: string,
  intent: Extract<MailIntent, { kind: 'code' }>,
  now: number,
  passwordResetUrl: string | null,
): MailContent {
  const minutes = Math.max(1, Math.round((intent.expiresAt - now) / 60_000))
  const values = { email: to, code: intent.code, minutes: String(minutes) }
  if (intent.purpose !== 'reset_password') return { template: codeTemplate(intent.purpose), values }
  // a reset queued before reset keys were made has none: its mail leaves out what would show one (and the link)
  const resetKey = intent.resetKey ?? ''
  const link = resetKey === '' || passwordResetUrl === null ? '' : resetLink(passwordResetUrl, resetKey, to)
  return {
    template: codeTemplate(intent.purpose),
    values: { ...values, reset_key: resetKey, reset_link: link },
  }
}

/** The reason of a mail's security events: a code's purpose, null for every other mail. */
export function mailEventReason(intent: MailIntent): Extract<MailIntent, { kind: 'code' }>['purpose'] | null {
  return intent.kind === 'code' ? intent.purpose : null
}
