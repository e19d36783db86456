import type { SecurityEvent } from '../security-event.js'

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
  /**
   * At most `limit` accounts in id order, those after the id `after` (all when it is absent): a page of
   * `tessera users list`, the next one starting after the last id of this one.
   */
  list(page: { after?: string; limit: number }): Promise<UserRecord[]>
  /**
   * Deletes the account (`tessera users delete`); true when there was one. In SQL its sessions go with it (a
   * foreign key); sessions in Redis are the caller's to retire first (SessionStore.retire).
   */
  delete(id: string): Promise<boolean>
}

/**
 * A session as stored (docs/api.md §2.4): one device's chain of refresh tokens, of which only the current one is
 * good. The token itself is never stored, only its SHA-256 digest.
 */
export interface StoredSession {
  /** 32 lowercase hexadecimal digits, random; what `GET /auth/sessions` shows and `DELETE /auth/sessions/<id>` names. */
  id: string
  userId: string
  /** SHA-256 hex of the chain's current refresh token. */
  digest: string
  /** Epoch milliseconds: the current token's expiry; from then on the session is gone for every operation. */
  expiresAt: number
  /** Epoch milliseconds: when the session started (login, registration). */
  createdAt: number
  /** Epoch milliseconds: the session's start or its latest rotation. */
  lastUsedAt: number
  /** A short description of the device, from the User-Agent at the start (at most 64 printable characters; '' unknown). */
  device: string
  /** The client's network (coarsened: IPv4 /24, IPv6 /48) at the start or latest rotation; null off HTTP. */
  clientAddress: string | null
  /** The digest of the token the current one replaced (the reuse grace's anchor); null before the first rotation. */
  previousDigest: string | null
  /** Epoch milliseconds: when the current token replaced `previousDigest`'s; null before the first rotation. */
  rotatedAt: number | null
}

/** What a rotation writes into the session whose current token it replaces. */
export interface SessionRotation {
  /** The successor's digest and expiry. */
  digest: string
  expiresAt: number
  /** The client's network now (coarsened, as StoredSession.clientAddress). */
  clientAddress: string | null
}

/** How many sessions a user may have: `single` (the specification: a start replaces every other) or at most n. */
export type SessionLimit = 'single' | number

/**
 * The sessions of every user (docs/api.md §2.4, §3). Methods throw StorageError when the backend fails; "not found"
 * is null or false, never an error. Every method counts a session whose `expiresAt` is at or before `now` as gone.
 */
export interface SessionStore {
  /**
   * Stores a new session (login, registration). With `limit` `single`, it replaces every other session of the
   * user: of any number of concurrent starts for one user, exactly one session remains. With a number, the user's
   * sessions beyond `limit` (the new one counted) are ended, least recently used first (in `list`'s order); of
   * concurrent starts for one user, exactly `limit` sessions remain, those that order keeps (which need not be every
   * new one: the new sessions of one millisecond are ordered by id). False, with nothing stored,
   * when the account has been deleted since the caller read it (a foreign key in SQL, a retired user in Redis).
   */
  start(session: StoredSession, limit: SessionLimit, now: number): Promise<boolean>
  /**
   * The atomic compare-and-swap of a refresh (spec 3): in the user's session whose current token has digest
   * `currentDigest` and has not expired at `now`, makes `next` the current token, `currentDigest` its
   * previousDigest, `now` its rotatedAt and lastUsedAt. Of any number of concurrent calls with the same
   * `currentDigest`, from any number of processes, at most one returns true.
   */
  rotate(userId: string, currentDigest: string, next: SessionRotation, now: number): Promise<boolean>
  /** The user's unexpired session with this id, with this current digest, or with this previous digest; else null. */
  find(
    userId: string,
    by: { id: string } | { digest: string } | { previousDigest: string },
    now: number,
  ): Promise<StoredSession | null>
  /** The user's unexpired sessions, most recently used first: the latest lastUsedAt, then createdAt, then by id. */
  list(userId: string, now: number): Promise<StoredSession[]>
  /** Ends the user's session `sessionId`; true when the user had it (unexpired at `now`). */
  end(userId: string, sessionId: string, now: number): Promise<boolean>
  /** Ends every session of the user, but `except` when given; resolves with how many unexpired ones ended. */
  endAll(userId: string, now: number, except?: string): Promise<number>
  /**
   * The first step of deleting an account: ends the user's sessions and makes every later `start` for the user
   * false until `until` (epoch ms; at least the refresh-token lifetime), so that a login that read the account
   * before it was deleted cannot leave a session behind it. SQL needs no mark (its foreign key refuses the session);
   * Redis keeps one, `<prefix>retired:{<user id>}`, which the start script checks. Refresh does not read the
   * account; it needs no check, since rotation only replaces a token that is stored.
   */
  retire(userId: string, until: number): Promise<void>
  /** Undoes `retire` when the account could not be deleted after all: the user may log in again. */
  reinstate(userId: string): Promise<void>
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

/** How a key's attempts are spaced out: a few free, then a wait that doubles with each further attempt. */
export interface BackoffPolicy {
  /** Attempts taken without any wait since the key's record began. */
  free: number
  /** The wait before the first attempt past the free ones; each further attempt doubles it. */
  baseDelayMs: number
  /** The longest wait between two attempts. */
  maxDelayMs: number
  /** A record is forgotten this long after its last attempt, and the key starts again with its free attempts. */
  forgetAfterMs: number
}

/**
 * Login attempts per key (an account, a client address, an account at an address), shared by every instance that
 * uses the same store: what the login throttle counts with (docs/api.md R8.4 to R8.6). A record is a count of
 * attempts and the time of the last one. Times are the service clock's, passed in. Every method is atomic: of
 * concurrent calls from any number of processes, each sees the others' effects. Methods throw StorageError when the
 * store fails; what that means is the caller's decision.
 */
export interface LoginAttemptStore {
  /**
   * Takes one attempt on `key` at `now` if `policy` lets it through: counts it and returns 0. Otherwise counts
   * nothing and returns the milliseconds until an attempt will be let through.
   */
  take(key: string, now: number, policy: BackoffPolicy): Promise<number>
  /** Gives back one attempt taken on `key` (it succeeded), if the key has any. */
  refund(key: string, now: number): Promise<void>
  /** Starts `key` afresh with no attempts, kept for `keepMs` from `now`. */
  remember(key: string, now: number, keepMs: number): Promise<void>
  /** The attempts counted on a remembered `key` since it was remembered; null when it is not (or no longer). */
  remembered(key: string, now: number): Promise<number | null>
  /** Counts one attempt on a remembered `key` without any check; nothing when it is not remembered. */
  count(key: string, now: number): Promise<void>
  /** Removes `key`'s record; removing none is not an error. */
  forget(key: string): Promise<void>
}

/** The audit trail (docs/api.md "Audit events"), in the SQL store whatever REDIS_URL says. */
export interface AuditStore {
  /** Appends the events in one statement (a multi-row insert). */
  append(events: readonly SecurityEvent[]): Promise<void>
  /**
   * The user's events at or after `since` (epoch ms), oldest first, at most `limit`. When more match, the latest
   * `limit` of them.
   */
  list(query: { userId: string; since?: number; limit?: number }): Promise<SecurityEvent[]>
  /** Deletes the events older than `before` (epoch ms), in bounded batches; resolves with how many. */
  prune(before: number): Promise<number>
  /** Erases the client addresses of the user's events (account deletion); resolves with how many. */
  eraseClientAddresses(userId: string): Promise<number>
}

/** Resolves when the dependency answers; rejects otherwise. */
export type HealthProbe = () => Promise<void>

/** An engine that holds stores: the SQL database of DATABASE_URL (a SqlEngine), or the Redis of REDIS_URL. */
export type StoreEngine = 'sqlite' | 'postgres' | 'mysql' | 'redis'

/** The engine of DATABASE_URL. */
type DatabaseEngine = Exclude<StoreEngine, 'redis'>

/**
 * Which engine holds each store, stated once by openStores where it chooses the stores (from DATABASE_URL and
 * REDIS_URL), for whoever labels or reports by engine (the store metrics).
 */
export interface StorePlacement {
  /** The accounts: always the SQL database. */
  users: DatabaseEngine
  /** The sessions: the SQL database, or Redis when REDIS_URL is set. */
  sessions: StoreEngine
  /** The audit trail: always the SQL database, whatever REDIS_URL says. */
  audit: DatabaseEngine
  /** Redis when REDIS_URL is set; null when each process counts for itself (Stores.rateCounters is null). */
  rateCounters: 'redis' | null
  /** Redis when REDIS_URL is set; null when each process counts for itself (Stores.loginAttempts is null). */
  loginAttempts: 'redis' | null
  /** The engine each health probe asks, by the probe's name (Stores.probes). */
  probes: Readonly<Record<string, StoreEngine>>
}

/** What the service runs on; built by openStores from DATABASE_URL and REDIS_URL. */
export interface Stores {
  users: UserStore
  sessions: SessionStore
  /** The audit trail, always in the SQL database. */
  audit: AuditStore
  /** One probe per dependency, by the name that /health reports (`database`, `redis`). */
  probes: Readonly<Record<string, HealthProbe>>
  /** Rate-limit counters shared by every instance (in Redis); null when each process counts for itself. */
  rateCounters: RateCounterStore | null
  /** Login attempts shared by every instance (in Redis); null when each process counts for itself. */
  loginAttempts: LoginAttemptStore | null
  /** Which engine holds each of these stores. */
  placement: StorePlacement
  /** A description for the start-up log line, without credentials. */
  description: string
  /** Closes every connection. */
  close(): Promise<void>
}
