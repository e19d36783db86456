/** A user account as stored (spec 2.1). */
export interface UserRecord {
  /** 10-digit id. */
  id: string
  /** Normalized (trimmed, lower-cased) e-mail; unique. */
  email: string
  /** Argon2id PHC string. */
  passwordHash: string
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string
}

export type CreateUserResult = 'created' | 'email_taken' | 'id_taken'

/** The accounts. Methods throw StorageError when the backend fails; "not found" is null, never an error. */
export interface UserStore {
  /**
   * Inserts the account. Reports, instead of throwing, when the e-mail or the id is already used, so the caller can
   * answer 409 or draw another id. Two concurrent creations with one e-mail: exactly one is 'created'.
   */
  create(user: UserRecord): Promise<CreateUserResult>
  findByEmail(email: string): Promise<UserRecord | null>
  findById(id: string): Promise<UserRecord | null>
  /** Replaces the password hash (re-hash after a change of Argon2 parameters). */
  updatePasswordHash(id: string, passwordHash: string): Promise<void>
}

/** A refresh token as stored: its SHA-256 digest and expiry, never the token (docs/api.md §2.4). */
export interface StoredRefreshToken {
  digest: string
  /** Epoch milliseconds; from then on the token is gone for every operation. */
  expiresAt: number
}

/** At most one current refresh token per user (spec 2.4). */
export interface RefreshTokenStore {
  /** Makes `token` the user's current one, replacing any earlier one (login, register). */
  put(userId: string, token: StoredRefreshToken): Promise<void>
  /**
   * The atomic compare-and-swap of a refresh (spec 3): replaces the current token with `next` only if the current
   * one has digest `currentDigest` and has not expired at `now`. Of any number of concurrent calls with the same
   * `currentDigest`, from any number of processes, at most one returns true.
   */
  rotate(userId: string, currentDigest: string, next: StoredRefreshToken, now: number): Promise<boolean>
  /** Removes the user's token, if any (logout). */
  delete(userId: string): Promise<void>
}

/** A count of hits in a window, as RateCounterStore.increment reports it. */
export interface RateCount {
  /** Hits on the key in the current window, this one included. */
  count: number
  /** Milliseconds until the window ends and the count starts again from zero. */
  resetAfterMs: number
}

/**
 * Hit counters in fixed windows, shared by every instance that uses the same store: what rate limits count with.
 * A key is whatever the caller counts by (an endpoint and a client address).
 */
export interface RateCounterStore {
  /**
   * Counts one hit on `key`. The first hit opens a window of `windowMs`; hits within it add up; the first hit after
   * it ends opens a new one. Atomic: of concurrent hits from any number of processes, each gets its own count.
   * Throws StorageError when the store fails; what an uncounted request means is the caller's decision.
   */
  increment(key: string, windowMs: number): Promise<RateCount>
}

/** Resolves when the dependency answers; rejects otherwise. */
export type HealthProbe = () => Promise<void>

/** What the service runs on; built by openStores from DATABASE_URL and REDIS_URL. */
export interface Stores {
  users: UserStore
  refreshTokens: RefreshTokenStore
  /** One probe per dependency, by the name that /health reports (`database`, `redis`). */
  probes: Readonly<Record<string, HealthProbe>>
  /** Rate-limit counters shared by every instance (in Redis); null when each process counts for itself. */
  rateCounters: RateCounterStore | null
  /** A description for the start-up log line, without credentials. */
  description: string
  /** Closes every connection. */
  close(): Promise<void>
}
