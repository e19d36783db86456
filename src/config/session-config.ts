import type { EnvReader } from './env-reader.js'

/** AUTH_SESSIONS: one session per user, as the specification has it, or one per device. */
export const SESSION_MODES = ['single', 'per-device'] as const
export type SessionMode = (typeof SESSION_MODES)[number]

/**
 * How sessions behave (docs/api.md §3 "Sessions"). The defaults are the specification's: one session per user, a
 * second use of a refresh token is 401 and ends nothing, and no token carries a session id.
 */
export interface SessionConfig {
  mode: SessionMode
  /** per-device only: a user's sessions at most; a start beyond it ends the least recently used. */
  maxSessions: number
  /**
   * Seconds after a rotation during which the rotated token, presented again, gets the same successor (a lost
   * answer, two tabs racing); 0 for none.
   */
  reuseGraceSeconds: number
  /** Whether a rotated token presented after the grace ends its session (RFC 9700 §4.14.2). */
  reuseEndsSession: boolean
  /**
   * Whether tokens carry `sid`: access tokens in per-device mode (the session of a request), refresh tokens also
   * when reuse detection is on (so that any token of a chain finds its session).
   */
  sidInAccessTokens: boolean
  sidInRefreshTokens: boolean
  /**
   * AUTH_SESSION_LIFETIME_DAYS in milliseconds: the absolute lifetime of a session, from its start, after which it
   * refreshes no more, however recently it was refreshed (ASVS's absolute session lifetime); null (the default) for
   * none: a session lives while it is refreshed.
   */
  lifetimeMs: number | null
}

/**
 * The longest reuse grace: a replayed token inside it gets a live successor, so the window is one in which a stolen
 * token is as good as the owner's. GoTrue uses 10 seconds; a minute covers any retry of a lost answer.
 */
const MAX_GRACE_SECONDS = 60

/** The longest absolute session lifetime: ten years, the longest AUTH_REFRESH_TOKEN_EXPIRATION_DAYS too. */
const MAX_LIFETIME_DAYS = 3650

const DAY_MS = 86_400_000

export function readSessionConfig(read: EnvReader): SessionConfig {
  const mode = read.oneOf('AUTH_SESSIONS', SESSION_MODES, 'single')
  const reuseEndsSession =
    read.oneOf('AUTH_REFRESH_REUSE_ENDS_SESSION', ['true', 'false'], 'false') === 'true'
  const lifetimeDays =
    read.optional('AUTH_SESSION_LIFETIME_DAYS') === null
      ? null
      : read.integer('AUTH_SESSION_LIFETIME_DAYS', 0, { min: 1, max: MAX_LIFETIME_DAYS })
  return {
    mode,
    maxSessions: read.integer('AUTH_MAX_SESSIONS', 10, { min: 1, max: 1000 }),
    reuseGraceSeconds: read.integer('AUTH_REFRESH_REUSE_GRACE_SECONDS', 0, {
      min: 0,
      max: MAX_GRACE_SECONDS,
    }),
    reuseEndsSession,
    sidInAccessTokens: mode === 'per-device',
    sidInRefreshTokens: mode === 'per-device' || reuseEndsSession,
    lifetimeMs: lifetimeDays === null ? null : lifetimeDays * DAY_MS,
  }
}
