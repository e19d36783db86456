/**
 * Why a session ended before its time, as its `session.ended` event says (docs/api.md R6.5.12): a logout of the
 * session itself, of the caller's others or of all (`?scope=`), a session removed from the list (DELETE
 * /auth/sessions/<id>), revoked by an operator or an admin, ended by a password change or reset, a role change, a
 * disable, a change of the second factors, the proof of an impostor's address, or the reuse of a rotated refresh
 * token. A session that expires, that a newer login replaces (AUTH_SESSIONS=single, AUTH_MAX_SESSIONS), or that goes
 * with its account (`user.deleted` says so) has none.
 */
export const SESSION_END_REASONS = [
  'logout',
  'logout_others',
  'logout_all',
  'removed',
  'revoked',
  'password_changed',
  'password_reset',
  'role_changed',
  'disabled',
  'mfa_changed',
  'address_claimed',
  'reuse_detected',
] as const
export type SessionEndReason = (typeof SESSION_END_REASONS)[number]
