// The console's one notice: what an act did, or why it failed, in words an admin can act on.

import type { TesseraError } from './client.js'
import { $ } from './dom.js'

export type NoticeKind = 'ok' | 'error' | 'info'

/** The messages of the admin API's two 403s (docs/api.md §4.27). */
export const SECOND_FACTOR_REQUIRED = 'Second factor required'

/** Shows the notice; an error is announced at once (role alert), the rest politely (role status). */
export function notice(kind: NoticeKind, title: string, text: string): void {
  const box = $('notice')
  box.dataset.kind = kind
  box.setAttribute('role', kind === 'error' ? 'alert' : 'status')
  $('notice-title').textContent = title
  $('notice-text').textContent = text
  box.hidden = false
}

export function clearNotice(): void {
  $('notice').hidden = true
}

/** Whether the failure means the account may not use the console: not an admin, or without its second factor. */
export const refusesAdmin = (error: TesseraError): boolean => error.status === 403

/**
 * What the notice says of a failed act (`label`, such as "Disabling the account"): a title and a text. `signedIn`:
 * whether the act was made signed in (a 401 then means the session ended; before, it is a refused sign-in).
 */
export function explain(
  label: string,
  error: TesseraError,
  signedIn: boolean,
): [title: string, text: string] {
  const fields = error.errors.map(({ message }) => message).join('; ')
  switch (true) {
    case error.status === 0:
      return [`${label} failed`, 'The service cannot be reached. Is it running?']
    case error.status === 401 && !signedIn:
      // a wrong password or code, in the service's words (which never say which half of a login was wrong)
      return [`${label} failed`, `${error.message}.`]
    case error.status === 401:
      return ['Your session has ended', 'Sign in again to go on.']
    case error.status === 403 && error.message === SECOND_FACTOR_REQUIRED:
      return [
        'Second factor required',
        'An admin must sign in with a second factor: this account has none, or this session was not established ' +
          'with it. Add an authenticator app to the account, then sign in here again with its code.',
      ]
    case error.status === 403:
      return [
        'Not an admin',
        'This account is not an admin of the service: only an account with the admin role (ADMIN_ROLE, ' +
          '"tessera-admin" by default) may use the console. An operator gives it with "tessera users set-role".',
      ]
    case error.status === 404:
      return [`${label} failed`, 'There is no such account any more: it may have been deleted meanwhile.']
    case error.status === 400 && fields !== '':
      return [`${label} failed`, `${error.message}: ${fields}`]
    case error.status === 429 || error.status === 503:
      return [
        `${label} failed`,
        `${error.message}${error.retryAfter === null ? '' : `: try again in ${error.retryAfter} s`}.`,
      ]
    case error.status >= 500:
      return [`${label} failed`, `The service failed (${error.status} ${error.message}). Try again.`]
    default:
      // 409 (yourself, or the last admin) and the rest say it best in the service's own words
      return [`${label} failed`, `${error.message}.`]
  }
}
