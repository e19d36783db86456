import {
  EmailUnverifiedError,
  PasskeyNotVerifiedError,
  PasskeyRefusedError,
  PasskeyTakenError,
} from '../errors.js'
import { message } from '../language/message.js'
import { answer, httpsRequired, LIMITED, refusal, unauthorized } from './response-parts.js'
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
  LoginResponse,
  PasskeyFactorResponse,
  PasskeyLoginOptionsResponse,
  PasskeyRegistrationOptionsResponse,
} from './schemas.js'

// Every status each passkey operation answers (docs/api.md §4.26), made of the parts the others use.

const PER_ADDRESS = 'More than RATE_LIMIT_PER_MINUTE requests from this client address in a minute (R8.1)'
const TICKET_ERROR = invalid('/ticket', message('field.pattern', { pattern: '^[A-Za-z0-9_-]{43}$' }))

/** POST /auth/passkeys/register/options. */
export const passkeyRegistrationOptionsResponses = () => ({
  ...limitedJsonRefusals(
    `Too many wrong passwords against this account (R8.5), or ${PER_ADDRESS.toLowerCase()}`,
  ),
  200: answer(
    PasskeyRegistrationOptionsResponse,
    'The creation options for the browser and the ticket of their challenge',
    LIMITED,
  ),
  400: withExamples(
    withExamples(codeRefused('§4.26'), passwordIncorrect()),
    badBody([invalid('/password', message('field.password_or_code'))], LIMITED),
  ),
  401: unauthorized(),
  403: withExamples(
    refusal("The account's address is not verified (§4.25)", [new EmailUnverifiedError()], LIMITED),
    httpsRequired(),
  ),
  503: mayHaveChanged(true),
})

/** POST /auth/passkeys/register/verify. */
export const passkeyRegisterResponses = () => ({
  ...limitedJsonRefusals(PER_ADDRESS),
  200: answer(
    PasskeyFactorResponse,
    "The passkey is stored; the caller's session counts as established with it, the other sessions ended",
    LIMITED,
  ),
  400: withExamples(
    refusal(
      "The ticket is unknown, used, expired or another account's, or the credential does not verify (another origin or relying party, another challenge, no user presence, an algorithm not offered): one answer for all; the ceremony starts again",
      [new PasskeyNotVerifiedError()],
      LIMITED,
    ),
    badBody([TICKET_ERROR, invalid('/name', message('field.controls'))], LIMITED),
  ),
  401: unauthorized(),
  409: refusal('This credential is registered already', [new PasskeyTakenError()], LIMITED),
  503: mayHaveChanged(false),
})

/** POST /auth/passkeys/login/options. */
export const passkeyLoginOptionsResponses = () => ({
  ...limitedJsonRefusals(PER_ADDRESS),
  200: answer(
    PasskeyLoginOptionsResponse,
    'The request options for the browser and the ticket of their challenge',
    LIMITED,
  ),
  400: badBody(
    [invalid('/mfa_ticket', message('field.pattern', { pattern: '^[A-Za-z0-9_-]{43}$' }))],
    LIMITED,
  ),
  503: mayHaveChanged(false),
})

/** POST /auth/passkeys/login/verify. */
export const passkeyLoginResponses = () => ({
  ...limitedJsonRefusals(PER_ADDRESS),
  200: answer(LoginResponse, 'Signed in with the passkey: the account and a new token pair', LIMITED),
  400: badBody([TICKET_ERROR], LIMITED),
  401: refusal(
    "A ticket unknown, used or expired, a passkey no account has, an assertion for another origin or relying party or of another challenge, no user verification for a sign-in by the passkey alone, a bad signature, a counter that went backwards, a passkey not of the challenge's account (or a challenge used, expired or out of tries), an account that can no longer sign in: one answer for all",
    [new PasskeyRefusedError()],
    LIMITED,
  ),
  503: mayHaveChanged(false),
})
