import { type Static, type TSchema, Type } from 'typebox'
import { EMAIL_PATTERN } from '../auth/email.js'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/password-policy.js'
import { RESET_KEY_INPUT_PATTERN } from '../auth/reset-key.js'
import { BIO_MAX_LENGTH, NICKNAME_MAX_LENGTH, USERNAME_INPUT_PATTERN } from '../profile/profile-rules.js'

// One schema per request and response: it validates the request, types the handler and feeds the OpenAPI document.
// The e-mail's `pattern` is the service's own rule (EMAIL_PATTERN, which a test holds to isValidEmail), not
// `format: email`, which validators read as RFC 5321; `format: password` is the service's own check, and
// `x-password` applies the password policy with its one message, ahead of the length limits that document it (see
// http/validation.ts). The answers of each operation, with their descriptions and headers, are in responses.ts.

const Email = Type.String({
  pattern: EMAIL_PATTERN,
  description:
    'WHATWG valid e-mail address, at most 254 characters once white space around it is removed; stored and returned trimmed and lower-cased',
  examples: ['ada@example.com'],
})
const CreatedAt = Type.String({
  format: 'date-time',
  description: 'ISO 8601 UTC with milliseconds',
  examples: ['2026-11-20T08:15:30.123Z'],
})
export const UserId = Type.String({
  pattern: '^[1-9][0-9]{9}$',
  description: '10-digit user id',
  examples: ['4821039576'],
})
const AccessToken = Type.String({ description: 'JWT, token_type Access; 15 minutes by default' })
const RefreshToken = Type.String({ description: 'JWT, token_type Refresh; 7 days by default; usable once' })

const NewPassword = Type.String({
  'x-password': 'new',
  format: 'password',
  minLength: PASSWORD_MIN_LENGTH,
  maxLength: PASSWORD_MAX_LENGTH,
  description: `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} Unicode characters (code points), well-formed`,
})
/** A password given to prove who one is: any non-empty text up to the longest a password can be. */
const GivenPassword = (description: string) =>
  Type.String({
    'x-password': 'login',
    format: 'password',
    minLength: 1,
    maxLength: PASSWORD_MAX_LENGTH,
    description,
  })
/** A mailed code as a request gives it: six digits. */
export const VERIFICATION_CODE_PATTERN = '^[0-9]{6}$'
const VerificationCode = Type.String({
  pattern: VERIFICATION_CODE_PATTERN,
  description: 'The six digits of a code mailed by POST /auth/email/send-code or POST /auth/me/send-code',
  examples: ['042917'],
})
/**
 * What POST /auth/password/reset takes in `verification_code`: the six digits of a code, or the reset key mailed
 * with it (docs/api.md R4.17), so that a front end with a free text field takes either.
 */
export const RESET_CODE_PATTERN = `^(?:[0-9]{6}|${RESET_KEY_INPUT_PATTERN})$`
/** A reset key with hyphens and spaces around and between its characters: longer than that is no reset key. */
const RESET_CODE_MAX_LENGTH = 64
const ResetCode = Type.String({
  pattern: RESET_CODE_PATTERN,
  maxLength: RESET_CODE_MAX_LENGTH,
  description:
    'The six digits of a reset_password code, or the reset key mailed with it (28 characters of Crockford base32, in either case; hyphens and spaces are ignored)',
  examples: ['042917', '7K3M-9QXD-2HNT-W4BV-0RZE-6JPA-C8GS'],
})
const EmailVerified = Type.Boolean({
  description: 'Whether the owner proved the address with a code sent there (docs/api.md §4.15)',
})

export const RegisterBody = Type.Object({
  email: Email,
  password: NewPassword,
  verification_code: Type.Optional(
    Type.String({
      ...VerificationCode,
      description:
        'A code of purpose `register` sent to the address: proves it (email_verified). Required with AUTH_REGISTER_CODE=required',
    }),
  ),
})
export type RegisterBody = Static<typeof RegisterBody>

export const LoginBody = Type.Object({
  email: Email,
  password: Type.String({
    'x-password': 'login',
    format: 'password',
    minLength: 1,
    maxLength: PASSWORD_MAX_LENGTH,
    description: 'not empty; a wrong password of any length is a 401',
  }),
})
export type LoginBody = Static<typeof LoginBody>

export const SendCodeBody = Type.Object({
  email: Email,
  purpose: Type.Unsafe<'register' | 'login' | 'reset_password'>({
    type: 'string',
    enum: ['register', 'login', 'reset_password'],
    description: 'What the code is for: POST /auth/register, /auth/login/email-code or /auth/password/reset',
  }),
})
export type SendCodeBody = Static<typeof SendCodeBody>

export const SendAccountCodeBody = Type.Object({
  purpose: Type.Unsafe<'verify_email' | 'change_email' | 'delete_account' | 'manage_factors'>({
    type: 'string',
    enum: ['verify_email', 'change_email', 'delete_account', 'manage_factors'],
    description:
      "What the code is for: POST /auth/email/verify, /auth/email/change (sent to new_email), /auth/delete, or adding a second factor without a password (POST /auth/mfa/totp/setup, /auth/passkeys/register/options); all but change_email are sent to the account's address",
  }),
  new_email: Type.Optional({
    ...Email,
    description: 'With change_email (required there): the address to prove',
  }),
})
export type SendAccountCodeBody = Static<typeof SendAccountCodeBody>

export const CodeLoginBody = Type.Object({ email: Email, verification_code: VerificationCode })
export type CodeLoginBody = Static<typeof CodeLoginBody>

export const ResetPasswordBody = Type.Object({
  email: Email,
  verification_code: ResetCode,
  new_password: NewPassword,
})
export type ResetPasswordBody = Static<typeof ResetPasswordBody>

export const ChangePasswordBody = Type.Object({
  current_password: GivenPassword("The account's password now"),
  new_password: NewPassword,
})
export type ChangePasswordBody = Static<typeof ChangePasswordBody>

export const ChangeEmailBody = Type.Object({ new_email: Email, verification_code: VerificationCode })
export type ChangeEmailBody = Static<typeof ChangeEmailBody>

export const VerifyEmailBody = Type.Object({ verification_code: VerificationCode })
export type VerifyEmailBody = Static<typeof VerifyEmailBody>

export const DeleteAccountBody = Type.Object(
  {
    password: Type.Optional(GivenPassword("The account's password")),
    verification_code: Type.Optional({
      ...VerificationCode,
      description: 'Instead of the password: a code of purpose delete_account',
    }),
  },
  { description: 'Exactly one of `password` and `verification_code`' },
)
export type DeleteAccountBody = Static<typeof DeleteAccountBody>

/** A field that a string sets and null clears (JSON Schema's type list: one error naming the field). */
const Settable = (schema: Record<string, unknown>, description: string) =>
  Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], ...schema, description }))

export const ProfileBody = Type.Object(
  {
    username: Settable(
      { pattern: USERNAME_INPUT_PATTERN },
      '3 to 32 of a-z 0-9 _ . - (upper-case letters are lower-cased); unique; null removes it',
    ),
    nickname: Settable(
      { minLength: 1, maxLength: NICKNAME_MAX_LENGTH },
      '1 to 64 characters of text, without controls or invisible or direction-changing characters (emoji sequences keep their joiners); null removes it',
    ),
    bio: Settable(
      { maxLength: BIO_MAX_LENGTH },
      'At most 500 characters of text, line breaks and tabs allowed, without other controls or invisible or direction-changing characters; null (or "") removes it',
    ),
  },
  { description: 'The fields to change; an absent one is left as it is' },
)
export type ProfileBody = Static<typeof ProfileBody>

export const RefreshBody = Type.Object({
  refresh_token: Type.String({ minLength: 1, maxLength: 4096 }),
})
export type RefreshBody = Static<typeof RefreshBody>

/** spec 2.5: the success envelope; `code` is an integer, as in the error envelope. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({
    code: Type.Unsafe<200>({ type: 'integer', const: 200 }),
    message: Type.Literal('Success'),
    data,
  })
}

export const Nullable = (schema: TSchema, description: string) =>
  Type.Union([schema, Type.Null()], { description })

/**
 * The account as every answer shows it (docs/api.md §2.1): fields are added, never renamed or removed; unset values
 * are null. A response schema lists every field it sends (the serializer leaves the others out).
 */
const accountFields = {
  id: UserId,
  email: Email,
  email_verified: EmailVerified,
  username: Nullable(Type.String(), 'Unique, 3 to 32 of a-z 0-9 _ . - (lower-case); null when unset'),
  nickname: Nullable(Type.String(), '1 to 64 characters; null when unset'),
  avatar_url: Nullable(
    Type.String(),
    'The avatar, a path relative to the service origin with BASE_PATH (`/api/avatars/<id>`); null when none',
  ),
  bio: Nullable(Type.String(), 'At most 500 characters; null when unset'),
  role: Type.String({ description: '`user`, or a role an operator gave (`tessera users set-role`)' }),
  status: Type.Unsafe<'active' | 'disabled'>({
    type: 'string',
    enum: ['active', 'disabled'],
    description: 'A disabled account cannot log in or refresh',
  }),
  password_set: Type.Boolean({
    description: 'Whether the account has a password (an account made by a provider sign-in has none)',
  }),
  providers: Type.Array(Type.String(), { description: 'The names of the linked providers, sorted' }),
  created_at: CreatedAt,
  updated_at: Type.String({
    format: 'date-time',
    description: 'ISO 8601 UTC with milliseconds: the latest change of profile, role or status',
  }),
}
/** The account (`data` of GET /auth/me and of the answers that change it). */
export const AccountData = Type.Object(accountFields)
/** A login answer's `data`: the account and a new token pair. */
export const LoginData = Type.Object({
  ...accountFields,
  access_token: AccessToken,
  refresh_token: RefreshToken,
})

/**
 * docs/api.md §4.25: what a first factor alone answers for an account with a second factor, instead of a login
 * answer: no tokens, a ticket that POST /auth/mfa/verify (or a passkey) completes.
 */
export const ChallengeData = Type.Object({
  mfa_required: Type.Literal(true),
  mfa_ticket: Type.String({
    pattern: '^[A-Za-z0-9_-]{43}$',
    description: 'Good for five minutes, once, for five tries; bound to the account and its first factor',
  }),
  factors: Type.Array(
    Type.Unsafe<'totp' | 'passkey' | 'recovery_code'>({
      type: 'string',
      enum: ['totp', 'passkey', 'recovery_code'],
    }),
    { description: 'The kinds of proof the account can give' },
  ),
})

export const RegisterResponse = Envelope(LoginData)
export const LoginResponse = Envelope(LoginData)
/**
 * The answer of a first factor (login, code, reset, provider exchange): a login answer, or for an account with a
 * second factor its challenge (docs/api.md §4.25).
 */
export const SignInResponse = Envelope(
  Type.Union([LoginData, ChallengeData], {
    description: 'A login answer, or `mfa_required: true` with a ticket for an account with a second factor',
  }),
)
export const RefreshResponse = Envelope(
  Type.Object({ access_token: AccessToken, refresh_token: RefreshToken }),
)
export const LogoutResponse = Envelope(Type.Null())
export const MeResponse = Envelope(AccountData)
/** The answer of a change to the account (POST /auth/email/change, /auth/email/verify, PUT /auth/profile …). */
export const AccountResponse = Envelope(AccountData)
/** `data: null`: a code sent, an account deleted. */
export const DoneResponse = Envelope(Type.Null())

export const Instant = (description: string) =>
  Type.String({ format: 'date-time', description, examples: ['2026-11-20T08:15:30.123Z'] })

/** One session as GET /auth/sessions lists it (docs/api.md §4.11). */
const SessionItem = Type.Object({
  id: Type.String({
    pattern: '^[0-9a-f]{32}$',
    description:
      'The session id: what DELETE /auth/sessions/{id} takes, and the `sid` claim of per-device tokens',
    examples: ['3f2a9c0e7d1b4a56b8e0c9d2f1a3b4c5'],
  }),
  created_at: Instant('When the session started (login or registration), ISO 8601 UTC with milliseconds'),
  last_used_at: Instant('Its start or latest refresh, ISO 8601 UTC with milliseconds'),
  device: Type.String({
    maxLength: 64,
    description: 'A short description from the User-Agent it started with; empty when there was none',
    examples: ['Firefox on Linux'],
  }),
  client_address: Type.Union([Type.String(), Type.Null()], {
    description: 'The network it was last used from: an IPv4 /24 or an IPv6 /48; null when unknown',
    examples: ['203.0.113.0/24'],
  }),
  current: Type.Boolean({ description: "Whether it is the session of the request's own access token" }),
})
export const SessionsResponse = Envelope(Type.Array(SessionItem))
export const EndSessionResponse = Envelope(Type.Null())
export const SessionParams = Type.Object({
  id: Type.String({ description: 'A session id from GET /auth/sessions' }),
})
export const LogoutQuery = Type.Object({
  scope: Type.Optional(
    Type.Unsafe<'current' | 'others' | 'all'>({
      type: 'string',
      enum: ['current', 'others', 'all'],
      default: 'current',
      description:
        "Which of the caller's sessions to end: its own (the default), every other one, or all of them",
    }),
  ),
})

/** docs/api.md R1.2: every error uses the envelope, with the HTTP status as `code`. */
export const ErrorResponse = Type.Object(
  {
    code: Type.Integer({ description: 'the HTTP status' }),
    message: Type.String(),
    data: Type.Union([
      Type.Null(),
      Type.Object({
        errors: Type.Array(
          Type.Object({
            field: Type.String({ description: 'JSON Pointer into the request body' }),
            message: Type.String(),
          }),
        ),
      }),
    ]),
  },
  { $id: 'ErrorResponse', title: 'Error envelope' },
)

/** GET /health: `ok` with 200, `unavailable` with 503. */
export const HealthResponse = <S extends 'ok' | 'unavailable'>(status: S) =>
  Type.Object({
    status: Type.Literal(status),
    checks: Type.Record(Type.String(), Type.Boolean(), {
      description: 'each dependency (database, and redis when REDIS_URL is set) and whether it answered',
    }),
  })

export const InfoResponse = Type.Object({
  name: Type.String(),
  version: Type.String(),
  status: Type.Literal('running'),
  timestamp: Type.Integer({ description: 'current time, Unix seconds' }),
})

/** A factor's id: 32 lowercase hexadecimal digits. */
export const FactorId = Type.String({
  pattern: '^[0-9a-f]{32}$',
  examples: ['5f0c3e2a9b1d4c6e8a7b2d1e0f3c4a5b'],
})
const MfaTicket = Type.String({
  pattern: '^[A-Za-z0-9_-]{43}$',
  description: 'The `mfa_ticket` of the challenge',
})

/**
 * What proves the account holder present before a factor is added (docs/api.md §4.25): the password, or a code of
 * purpose `manage_factors` for an account without one.
 */
export const HolderProofBody = Type.Object(
  {
    password: Type.Optional(GivenPassword("The account's password")),
    verification_code: Type.Optional({
      ...VerificationCode,
      description: 'Instead of the password: a code of purpose manage_factors (POST /auth/me/send-code)',
    }),
  },
  { description: 'Exactly one of `password` and `verification_code`' },
)
export type HolderProofBody = Static<typeof HolderProofBody>

export const TotpSetupResponse = Envelope(
  Type.Object({
    factor_id: FactorId,
    secret: Type.String({ description: 'The secret in base32, to type into the app by hand' }),
    uri: Type.String({ description: "The otpauth://totp/ URI (issuer MFA_ISSUER, the account's address)" }),
    qr_code: Type.String({ description: 'The URI as a QR code: an image/svg+xml data URL' }),
  }),
)

export const TotpConfirmBody = Type.Object({
  factor_id: FactorId,
  code: Type.String({
    pattern: '^[0-9]{6}$',
    description: "The app's current six digits",
    examples: ['492039'],
  }),
})
export type TotpConfirmBody = Static<typeof TotpConfirmBody>

export const RecoveryCodesResponse = Envelope(
  Type.Object({
    recovery_codes: Type.Array(Type.String({ pattern: '^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$' }), {
      description: 'Ten codes, each good once; shown this once (any earlier set is void)',
    }),
  }),
)

export const MfaVerifyBody = Type.Object(
  {
    mfa_ticket: MfaTicket,
    code: Type.Optional(
      Type.String({ pattern: '^[0-9]{6}$', description: 'The six digits of the authenticator app' }),
    ),
    recovery_code: Type.Optional(
      Type.String({
        minLength: 12,
        maxLength: 64,
        description: 'Instead of `code`: one of the recovery codes (hyphens, spaces and case do not matter)',
      }),
    ),
  },
  { description: 'The ticket and exactly one of `code` and `recovery_code`' },
)
export type MfaVerifyBody = Static<typeof MfaVerifyBody>

/** GET /auth/mfa/factors: the confirmed factors, oldest first. */
export const FactorsResponse = Envelope(
  Type.Array(
    Type.Object({
      id: FactorId,
      type: Type.Unsafe<'totp' | 'passkey'>({ type: 'string', enum: ['totp', 'passkey'] }),
      name: Type.String({ description: '`Authenticator app`, or the name a passkey was given' }),
      created_at: Instant('When it was added'),
      last_used_at: Type.Union([Instant('When it last signed in'), Type.Null()]),
    }),
  ),
)

export const FactorParams = Type.Object({ id: Type.String({ description: "The factor's id" }) })

// docs/api.md §4.26: passkeys. A credential is what the browser's PublicKeyCredential.toJSON() gives
// (RegistrationResponseJSON, AuthenticationResponseJSON): its fields are checked here as far as they bound the work
// and the store (base64url, lengths), the rest by the WebAuthn verification; other fields a browser adds pass.

/** Unpadded base64url of at most `max` characters. */
const Base64Url = (max: number, description: string) =>
  Type.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: max, description })
/** A credential id as the store keeps it (at most 1,366 characters: 1,023 bytes). */
const CredentialId = Base64Url(1366, 'The credential id, base64url')
/** A ceremony's ticket: what its options came with. */
const CeremonyTicket = Type.String({
  pattern: '^[A-Za-z0-9_-]{43}$',
  description: 'The `ticket` of the options: good once, for five minutes',
})

const CredentialFields = {
  id: CredentialId,
  rawId: CredentialId,
  type: Type.Unsafe<'public-key'>({ type: 'string', enum: ['public-key'] }),
  // PublicKeyCredential.authenticatorAttachment is null when the browser does not know it
  authenticatorAttachment: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
  clientExtensionResults: Type.Optional(Type.Object({})),
}

export const RegistrationCredential = Type.Object(
  {
    ...CredentialFields,
    response: Type.Object({
      clientDataJSON: Base64Url(4096, 'The client data, base64url'),
      attestationObject: Base64Url(12288, 'The attestation object (CBOR), base64url'),
      transports: Type.Optional(
        Type.Array(Type.String({ maxLength: 32 }), {
          description: 'getTransports(): kept for the excludeCredentials of later registrations',
        }),
      ),
    }),
  },
  { description: "RegistrationResponseJSON: the new credential's PublicKeyCredential.toJSON()" },
)

export const AuthenticationCredential = Type.Object(
  {
    ...CredentialFields,
    response: Type.Object({
      clientDataJSON: Base64Url(4096, 'The client data, base64url'),
      authenticatorData: Base64Url(4096, 'The authenticator data, base64url'),
      signature: Base64Url(1024, 'The signature, base64url'),
      userHandle: Type.Optional(
        Type.Union([Base64Url(128, "The account's user handle, base64url"), Type.Null()]),
      ),
    }),
  },
  { description: "AuthenticationResponseJSON: the assertion's PublicKeyCredential.toJSON()" },
)

/** A ceremony's start: its ticket and the options for the browser. */
const CeremonyStart = (options: string) =>
  Envelope(
    Type.Object({
      ticket: Type.String({
        pattern: '^[A-Za-z0-9_-]{43}$',
        description:
          'To send back with the credential to the verify of the ceremony; good once, for five minutes',
      }),
      options: Type.Unsafe<Record<string, unknown>>({
        type: 'object',
        additionalProperties: true,
        description: options,
      }),
    }),
  )

export const PasskeyRegistrationOptionsResponse = CeremonyStart(
  "PublicKeyCredentialCreationOptionsJSON, for PublicKeyCredential.parseCreationOptionsFromJSON() and navigator.credentials.create(): the relying party (WEBAUTHN_RP_ID, MFA_ISSUER), the account (user.id its user handle), a resident key required, user verification preferred, the account's passkeys excluded, attestation none",
)

export const PasskeyLoginOptionsResponse = CeremonyStart(
  "PublicKeyCredentialRequestOptionsJSON, for PublicKeyCredential.parseRequestOptionsFromJSON() and navigator.credentials.get(): the RP ID, no allowCredentials (a discoverable credential names its account), userVerification 'required' (or 'preferred' with mfa_ticket)",
)

export const PasskeyRegisterBody = Type.Object({
  ticket: CeremonyTicket,
  credential: RegistrationCredential,
  name: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'What the factor list and the notice mail call it: 1 to 64 characters of text, as a nickname (default `Passkey`)',
    }),
  ),
})
export type PasskeyRegisterBody = Static<typeof PasskeyRegisterBody>

export const PasskeyLoginOptionsBody = Type.Object({
  mfa_ticket: Type.Optional({
    ...MfaTicket,
    description:
      'For the second step of a sign-in (the `mfa_ticket` of its challenge): user verification preferred',
  }),
})
export type PasskeyLoginOptionsBody = Static<typeof PasskeyLoginOptionsBody>

export const PasskeyLoginBody = Type.Object({
  ticket: CeremonyTicket,
  credential: AuthenticationCredential,
  mfa_ticket: Type.Optional({
    ...MfaTicket,
    description:
      'The challenge this passkey completes, whose account it must be; without it, a sign-in by the passkey alone',
  }),
})
export type PasskeyLoginBody = Static<typeof PasskeyLoginBody>

/** POST /auth/passkeys/register/verify: the factor, as GET /auth/mfa/factors lists it. */
export const PasskeyFactorResponse = Envelope(
  Type.Object({
    id: FactorId,
    type: Type.Literal('passkey'),
    name: Type.String({ description: 'The name given, or `Passkey`' }),
    created_at: Instant('When it was registered'),
    last_used_at: Type.Null({ description: 'Not used yet' }),
  }),
)
