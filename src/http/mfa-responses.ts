import {
  CodeRefusedError,
  EmailUnverifiedError,
  FactorNotFoundError,
  SecondFactorInvalidError,
  SecondFactorRequiredError,
} from '../errors.js'
import { message } from '../language/message.js'
import { answer, failed, httpsRequired, LIMITED, NO_STORE, refusal, unauthorized } from './response-parts.js'
import {
  badBody,
  codeRefused,
  invalid,
  limitedJsonRefusals,
  mayHaveChanged,
  passwordIncorrect,
  withExamples,
} from './responses.js'
import {
  DoneResponse,
  FactorsResponse,
  LoginResponse,
  RecoveryCodesResponse,
  TotpSetupResponse,
} from './schemas.js'

// Every status each second-factor operation answers (docs/api.md §4.25), made of the parts the others use.

const PER_ADDRESS = 'More than RATE_LIMIT_PER_MINUTE requests from this client address in a minute (R8.1)'
const PROOF_ERROR = invalid('/password', message('field.password_or_code'))

/** The 403s of adding a factor: HTTPS, and an address not verified yet. */
const enrolForbidden = () =>
  withExamples(
    refusal("The account's address is not verified (§4.25)", [new EmailUnverifiedError()], LIMITED),
    httpsRequired(),
  )
/** The 403s of what needs a session established with the second factor. */
const secondFactorForbidden = () =>
  withExamples(
    refusal(
      "The caller's session was not established with a second factor (§4.25)",
      [new SecondFactorRequiredError()],
      LIMITED,
    ),
    httpsRequired(),
  )

/** POST /auth/mfa/verify. */
export const mfaVerifyResponses = () => ({
  ...limitedJsonRefusals(`Too many wrong codes against this account (R8.5), or ${PER_ADDRESS.toLowerCase()}`),
  200: answer(LoginResponse, 'Signed in with both factors: the account and a new token pair', LIMITED),
  400: badBody([invalid('/code', message('field.code_or_recovery_code'))], LIMITED),
  401: refusal(
    'A wrong or replayed code or recovery code, a ticket unknown, used, expired or out of its five tries, or an account that can no longer sign in: one answer for all',
    [new SecondFactorInvalidError()],
    LIMITED,
  ),
  503: mayHaveChanged(false),
})

/** POST /auth/mfa/totp/setup. */
export const totpSetupResponses = () => ({
  ...limitedJsonRefusals(
    `Too many wrong passwords against this account (R8.5), or ${PER_ADDRESS.toLowerCase()}`,
  ),
  200: answer(TotpSetupResponse, 'A pending factor: what the authenticator app needs of it', LIMITED),
  400: withExamples(withExamples(codeRefused('§4.25'), passwordIncorrect()), badBody([PROOF_ERROR], LIMITED)),
  401: unauthorized(),
  403: enrolForbidden(),
  503: mayHaveChanged(true),
})

/** POST /auth/mfa/totp/confirm. */
export const totpConfirmResponses = () => ({
  ...limitedJsonRefusals(PER_ADDRESS),
  200: answer(
    RecoveryCodesResponse,
    'The factor is confirmed, the other sessions ended: ten recovery codes, shown this once',
    LIMITED,
  ),
  400: withExamples(
    refusal("The code is not the app's for this time", [new CodeRefusedError()], LIMITED),
    badBody([invalid('/code', message('field.pattern', { pattern: '^[0-9]{6}$' }))], LIMITED),
  ),
  401: unauthorized(),
  404: refusal('No pending factor of the caller has this id', [new FactorNotFoundError()], LIMITED),
  503: mayHaveChanged(false),
})

/** GET /auth/mfa/factors. */
export const factorsResponses = () => ({
  200: answer(FactorsResponse, "The caller's confirmed factors, oldest first", NO_STORE),
  401: unauthorized(),
  403: httpsRequired(),
  // read statelessly (R3.8), but from the factor store, which can fail (R7.1) as GET /auth/sessions's can
  500: failed(NO_STORE),
})

/** DELETE /auth/mfa/factors/<id>. */
export const removeFactorResponses = () => ({
  ...limitedJsonRefusals(PER_ADDRESS),
  200: answer(DoneResponse, 'The factor is removed and the other sessions ended', LIMITED),
  401: unauthorized(),
  403: secondFactorForbidden(),
  404: refusal('The caller has no factor with this id', [new FactorNotFoundError()], LIMITED),
  503: mayHaveChanged(false),
})

/** POST /auth/mfa/recovery-codes. */
export const recoveryCodesResponses = () => ({
  ...limitedJsonRefusals(PER_ADDRESS),
  200: answer(RecoveryCodesResponse, 'A new set of ten codes, shown this once; the old set is void', LIMITED),
  401: unauthorized(),
  403: secondFactorForbidden(),
  503: mayHaveChanged(false),
})
