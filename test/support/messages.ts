/** The public error texts, written out once for the suites, so that a changed text fails a test (docs/api.md 7). */
export const MESSAGES = {
  invalidCredentials: 'E-mail or password wrong',
  authorizationMissing: 'Authorization header is missing',
  authorizationMalformed: 'Authorization header must have the form "Bearer <token>"',
  accessTokenInvalid: 'Access token is invalid or expired',
  refreshTokenInvalid: 'Refresh token is invalid, expired or already used',
  tokenWrongType: 'Token is of the wrong type for this endpoint',
  emailTaken: 'E-mail already registered',
  malformedBody: 'Request body is not valid JSON',
  notFound: 'Not found',
  methodNotAllowed: 'Method not allowed',
  payloadTooLarge: 'Request body is too large',
  unsupportedMediaType: 'Content-Type must be application/json',
  rateLimited: 'Too many requests, retry later',
  internal: 'Internal server error',
  busy: 'Server is busy, retry shortly',
} as const

/** The texts a validation error gives for one field (docs/api.md R1.6), in `data.errors[].message`. */
export const FIELD_MESSAGES = {
  required: 'is required',
  notString: 'must be a string',
  notObject: 'must be an object',
  empty: 'must not be empty',
  invalidEmail: 'must be a valid e-mail address',
  /** Register: any password outside the rule of R2.1.5. */
  newPassword: 'must have 8 to 100 characters of well-formed Unicode',
  /** Login: a password no account can have (R4.4.2). */
  loginPassword: 'must have at most 100 characters of well-formed Unicode',
  refreshTokenTooLong: 'must have at most 4096 characters',
} as const
