import * as crypto from 'node:crypto'

/** The tag's length in hexadecimal digits: 48 bits, as the jti's layout leaves room for (auth/token-service.ts). */
export const SESSION_TAG_DIGITS = 12

/**
 * The tag of a session (docs/api.md R2.3.3): the first 48 bits of a SHA-256 of its id, carried in the `jti` of every
 * token of the session, so that a token names its session in every mode without a claim of its own (AUTH_SESSIONS=
 * single keeps the specification's claims). A hash, not the id: the id is a handle that ends the session
 * (`DELETE /auth/sessions/<id>`), the tag names it to the service alone. Unkeyed, so that rotating AUTH_JWT_SECRET
 * does not make every session's tokens stale; the id is 128 random bits, so the tag reveals nothing of it.
 */
export function sessionTag(sessionId: string): string {
  return crypto
    .createHash('sha256')
    .update(`tessera session tag v1\0${sessionId}`)
    .digest('hex')
    .slice(0, SESSION_TAG_DIGITS)
}
