/** The public error texts, written out once for the suites, so that a changed text fails a test. */
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
