/**
 * Why a provider sign-in did not sign anyone in (docs/api.md §4.24), each with the fixed text its result carries:
 * the popup's `message`, and with `redirect_to` the `error` parameter (the name). Nothing a provider or a request
 * sent is ever part of a text.
 */
export const SIGN_IN_FAILURES = {
  /** No provider of that name is configured (the front end may show WeChat or QQ). */
  provider_unknown: 'This sign-in provider is not available',
  /** `redirect_to` is not an address of FRONTEND_ORIGIN. */
  redirect_refused: 'redirect_to must be an address of the application',
  /** With `redirect_to`, `code_challenge` is missing or not an S256 challenge (RFC 7636). */
  challenge_refused: 'code_challenge must be the S256 challenge of a PKCE verifier',
  /** The provider's configuration could not be fetched (discovery failed or timed out). */
  provider_unavailable: 'The sign-in provider cannot be reached: try again later',
  /** No sign-in of this browser has that state: expired, used, or started in another browser. */
  state_invalid: 'The sign-in expired or was started in another browser: try again',
  /** The provider answered `access_denied`: the person declined. */
  cancelled: 'The sign-in was cancelled',
  /** The provider gave no e-mail address, so no account can be found or made. */
  email_missing: 'The provider did not share an e-mail address',
  /** The provider does not vouch for the address, and an account has it: no link is made. */
  email_unverified:
    'An account with this e-mail address exists: sign in to it with its password or a code sent to the address',
  /** Anything else: the provider's error, a code that did not redeem, a disabled account. */
  failed: 'Sign-in failed',
} as const

export type SignInFailure = keyof typeof SIGN_IN_FAILURES
