import { message } from '../language/message.js'

/**
 * Why a provider sign-in did not sign anyone in (docs/api.md §4.24), each with the fixed text its result carries
 * (`sign_in.<name>` in the message catalogues): the popup's `message`, in the language of the request (§1.5), and
 * with `redirect_to` the `error` parameter (the name). Nothing a provider or a request sent is ever part of a text.
 */
export const SIGN_IN_FAILURES = {
  /** No provider of that name is configured (the front end may show WeChat or QQ). */
  provider_unknown: message('sign_in.provider_unknown'),
  /** `redirect_to` is not an address of FRONTEND_ORIGIN. */
  redirect_refused: message('sign_in.redirect_refused'),
  /** With `redirect_to`, `code_challenge` is missing or not an S256 challenge (RFC 7636). */
  challenge_refused: message('sign_in.challenge_refused'),
  /** The provider's configuration could not be fetched (discovery failed or timed out). */
  provider_unavailable: message('sign_in.provider_unavailable'),
  /** No sign-in of this browser has that state: expired, used, or started in another browser. */
  state_invalid: message('sign_in.state_invalid'),
  /** The provider answered `access_denied`: the person declined. */
  cancelled: message('sign_in.cancelled'),
  /** The provider gave no e-mail address, so no account can be found or made. */
  email_missing: message('sign_in.email_missing'),
  /** The provider does not vouch for the address, and an account has it: no link is made. */
  email_unverified: message('sign_in.email_unverified'),
  /** Anything else: the provider's error, a code that did not redeem, a disabled account. */
  failed: message('sign_in.failed'),
} as const

/** The text of a sign-in that succeeded. */
export const SIGNED_IN = message('sign_in.signed_in')

export type SignInFailure = keyof typeof SIGN_IN_FAILURES
