/**
 * Whom a request is for, as its access token says (docs/api.md §2.3): the account (`sub`), the session it belongs to
 * when the token names it (`sid`), and the session's tag carried in its `jti` (R2.3.3). The token service reads it
 * from a verified token; the session service asks the store whether that session still exists.
 */
export interface Caller {
  userId: string
  /** The token's `sid`; null for a token without one (AUTH_SESSIONS=single, or one issued before per-device was on). */
  sessionId: string | null
  /**
   * The session tag of the token's `jti` (sessions/session-tag.ts), which every token of a session carries whatever
   * the mode; null for a token issued before tokens carried one.
   */
  sessionTag: string | null
  /** The token's `role`; absent for a `user`'s token. */
  role?: string
}
