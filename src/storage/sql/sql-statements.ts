import type { SecurityEvent } from '../../security-event.js'
import type {
  AccountStatus,
  CodeKey,
  NewOutboxMessage,
  OutboxLane,
  Profile,
  ProviderLink,
  SessionRotation,
  StoredAvatar,
  StoredFactor,
  StoredSession,
  TicketKind,
  UserRecord,
} from '../stores.js'

/** One statement: its text, and its values in the order of the text's placeholders. */
export interface SqlQuery {
  sql: string
  parameters: readonly unknown[]
}

/**
 * The statements of the SQL stores, written out in each engine's SQL (`statements.ts` in sqlite/, postgres/,
 * mysql/). Each text is fixed, so a call builds only the list of its values, and SQLite prepares each text once
 * for the life of its connection.
 */
export interface SqlStatements {
  /**
   * The rows (userSelectList: USER_COLUMNS, its avatar's id and its providers) of the accounts of `ids` (at least one),
   * in any order, none for an id without an account. The number of placeholders is rounded up to a power of two, so
   * that few texts exist.
   */
  findUsersByIds(ids: readonly string[]): SqlQuery
  /** The account's row (as findUsersByIds's), or none. */
  findUserByEmail(email: string): SqlQuery
  /** Inserts the account (USER_COLUMNS); fails with a unique violation when its id, e-mail or username is taken. */
  insertUser(user: UserRecord): SqlQuery
  /** Sets the account's password_hash ('' for none: storedPasswordHash). */
  updatePasswordHash(id: string, passwordHash: string): SqlQuery
  /**
   * Marks the account's address verified and sets its password_hash to '' (none), only while the address is
   * unverified: changes the row or none, so that of concurrent claims one changes it.
   */
  claimAddress(id: string): SqlQuery
  /** Marks the account's address verified; counts the row whether or not it was already (MySQL: FOUND_ROWS). */
  markEmailVerified(id: string): SqlQuery
  /** Sets the account's e-mail and marks it verified; fails with a unique violation when another account has it. */
  changeEmail(id: string, email: string): SqlQuery
  /** At most `limit` account rows (as findUsersByIds's) with an id greater than `after`, in id order. */
  listUsers(after: string, limit: number): SqlQuery
  /**
   * As listUsers, of the accounts whose e-mail or username is at or after `from` and before `to` in the byte order
   * (prefixRange: those that start with a prefix), each a range of its unique index.
   */
  searchUsers(range: { from: string; to: string }, after: string, limit: number): SqlQuery
  /** `active`: how many active accounts have the role `role` (the index users_role_status, migration 0011). */
  countActiveUsers(role: string): SqlQuery
  /** Deletes the account; its sessions, avatar and provider links go with it (ON DELETE CASCADE). */
  deleteUser(id: string): SqlQuery
  /**
   * Sets the account's username, nickname, bio and updated_at (migration 0006); fails with a unique violation when
   * another account has the username.
   */
  updateUserProfile(id: string, profile: Profile, updatedAt: string): SqlQuery
  /** Sets the account's role and updated_at; counts the row whether or not they change (MySQL: FOUND_ROWS). */
  setUserRole(id: string, role: string, updatedAt: string): SqlQuery
  /** Sets the account's status and updated_at; counts the row whether or not they change. */
  setUserStatus(id: string, status: AccountStatus, updatedAt: string): SqlQuery
  /**
   * setUserRole, only while the row is not an active account with the role `keep` or another active account has it
   * (KeepRole, stores.ts): one conditional UPDATE that changes one row or none. On a server, the accounts that have
   * `keep` are locked in id order before the row is changed.
   */
  setUserRoleKeeping(id: string, role: string, updatedAt: string, keep: string): SqlQuery
  /** setUserStatus, under the condition of setUserRoleKeeping. */
  setUserStatusKeeping(id: string, status: AccountStatus, updatedAt: string, keep: string): SqlQuery
  /** deleteUser, under the condition of setUserRoleKeeping: one row deleted, or none. */
  deleteUserKeeping(id: string, keep: string): SqlQuery
  /**
   * enqueueOutboxIfUser, under the condition of deleteUserKeeping as well: what reports a deletion under the
   * last-admin rule is queued in the deletion's transaction only when the deletion may happen.
   */
  enqueueOutboxIfUserKeeping(userId: string, message: NewOutboxMessage, keep: string): SqlQuery
  /**
   * Stores the session in the user's slot `slot` (migration 0004): inserts it, or replaces, id included, the
   * session that holds the slot, in one upsert on (user_id, slot). A session's own id as its slot never meets
   * another; SINGLE_SLOT does, which is what makes concurrent starts with the `single` limit leave one session.
   * Fails on the foreign key when the account is gone.
   */
  startSession(session: StoredSession, slot: string): SqlQuery
  /**
   * How many sessions the user has stored, expired ones included (`sessions`), and the earliest expiry among them
   * (`soonest`, null without any): a read that tells a start with a numeric limit whether it has anything to end.
   */
  countSessions(userId: string): SqlQuery
  /** The id of one of the user's sessions in a slot other than SINGLE_SLOT, or no row. */
  findSessionBesideSingle(userId: string): SqlQuery
  /** Deletes the user's sessions in any slot but SINGLE_SLOT: what a start with the `single` limit ends. */
  endSessionsBesideSingle(userId: string): SqlQuery
  /**
   * Deletes the user's expired sessions and all but the `keep` most recently used of the others, in SESSION_ORDER.
   * One order for every start, which does not favour its own session: concurrent starts agree on which sessions to
   * keep, and the last of them to run, which sees every session the others stored, leaves exactly `keep`.
   */
  evictSessions(userId: string, keep: number, now: number): SqlQuery
  /**
   * In the user's session whose current digest is `currentDigest` and that expires after `now`, makes `next` the
   * current token, `currentDigest` the previous one and `now` its rotated_at and last_used_at: one conditional
   * UPDATE that changes one row or none. The engine's row lock serializes concurrent rotations; the loser re-reads
   * the new digest, matches nothing and changes no row. With `next.lifetimeMs` (AUTH_SESSION_LIFETIME_DAYS), the
   * session must also have started after `now` - lifetimeMs, and its new expires_at is the lesser of `next`'s and
   * created_at + lifetimeMs, in the same UPDATE; without it, the statement is the one of before that setting.
   */
  rotateSession(userId: string, currentDigest: string, next: SessionRotation, now: number): SqlQuery
  /**
   * Sets second_factor (migration 0010) in the user's session `id` if it expires after `now`: counts the row whether
   * or not it was set already (MySQL: FOUND_ROWS).
   */
  markSessionSecondFactor(userId: string, id: string, now: number): SqlQuery
  /** The user's session (SESSION_COLUMNS) with this id, if it expires after `now`; else no row. */
  findSessionById(userId: string, id: string, now: number): SqlQuery
  /** The user's session whose current digest is `digest`, if it expires after `now`; else no row. */
  findSessionByDigest(userId: string, digest: string, now: number): SqlQuery
  /** The user's session whose previous digest is `previousDigest`, if it expires after `now`; else no row. */
  findSessionByPreviousDigest(userId: string, previousDigest: string, now: number): SqlQuery
  /** The user's sessions that expire after `now`, most recently used first (SESSION_ORDER). */
  listSessions(userId: string, now: number): SqlQuery
  /** Deletes the user's session `id` if it expires after `now`. */
  endSession(userId: string, id: string, now: number): SqlQuery
  /** Deletes the user's sessions that expire after `now` but the one with id `except` ('' for none). */
  endSessions(userId: string, except: string, now: number): SqlQuery
  /**
   * endSessions, in one transaction, reporting the ids of the sessions it deletes: the rows of its first statement.
   * One DELETE … RETURNING id where the engine has it; on MySQL a SELECT … FOR UPDATE of those ids, whose locks keep
   * another session of the user from starting before the DELETE that follows it, which then deletes the same rows.
   */
  endSessionsReturningIds(userId: string, except: string, now: number): SqlQuery[]
  /** Deletes every session of the user, expired ones too. */
  deleteSessions(userId: string): SqlQuery
  /**
   * Inserts the events, one row each, in one multi-row INSERT: its text depends on the number of rows only, so
   * SQLite keeps at most MAX_AUDIT_ROWS texts of it (see audit-rows.ts).
   */
  appendAuditEvents(events: readonly SecurityEvent[]): SqlQuery
  /** The latest `limit` of the user's events at or after `since`, oldest first (AUDIT_COLUMNS of each). */
  listAuditEvents(userId: string, since: number, limit: number): SqlQuery
  /**
   * At most `limit` events (their id, then AUDIT_COLUMNS) of the user and of the kind (each when given) at or after
   * `since` and after `position` (AUDIT_PAGE_START for none), newest first: auditPageText.
   */
  pageAuditEvents(
    filter: { userId?: string; kind?: string },
    since: number,
    position: { at: number; id: number },
    limit: number,
  ): SqlQuery
  /** Deletes at most `batch` of the oldest events before `before`. */
  pruneAuditEvents(before: number, batch: number): SqlQuery
  /** Sets the client address of the user's events to null where it is not already. */
  eraseAuditClientAddresses(userId: string): SqlQuery

  /** The `codes` of `key`'s row in `email_codes` (migration 0007), or no row. */
  findEmailCodes(key: CodeKey): SqlQuery
  /** Inserts `key`'s row with `codes` (encodeCodes), the last of which expires at `expiresAt`; one row per key. */
  insertEmailCodes(key: CodeKey, codes: string, expiresAt: number): SqlQuery
  /**
   * Sets `key`'s codes to `codes` (expiring at last at `expiresAt`) if they are still `current`: a compare and swap,
   * one row changed or none. The row lock serializes concurrent swaps, and each compares with what the one before
   * it left, so of swaps from one `current` at most one changes the row.
   */
  replaceEmailCodes(key: CodeKey, current: string, codes: string, expiresAt: number): SqlQuery
  /** Deletes `key`'s row if its codes are still `current`: one row deleted, or none (as replaceEmailCodes). */
  removeEmailCodes(key: CodeKey, current: string): SqlQuery
  /** Deletes the codes asked for by `userId` or sent to `address`. */
  deleteEmailCodes(userId: string, address: string): SqlQuery
  /** Deletes at most `batch` of the rows whose every code expired at or before `now`. */
  pruneEmailCodes(now: number, batch: number): SqlQuery

  /** Inserts the message (migrations 0005, 0012), unheld, no attempt made, due at its creation. */
  enqueueOutbox(message: NewOutboxMessage): SqlQuery
  /** Inserts the message as enqueueOutbox does, if the account `userId` exists: one row inserted, or none. */
  enqueueOutboxIfUser(userId: string, message: NewOutboxMessage): SqlQuery
  /**
   * One row if a message of `lane` is due at `now` and unheld, else none: the read an idle poll costs, on outbox_due
   * only (migration 0012).
   */
  findDueOutbox(lane: OutboxLane, now: number): SqlQuery
  /**
   * Gives messages of `lane` due at `now` and unheld (lease_until at or before `now`), in claim order
   * (MAIL_CLAIM_ORDERS, WEBHOOK_CLAIM_ORDER), to `claimant` until `leaseUntil`: the statements to run one after
   * another, each built with what is left of the claim's limit (less the rows the ones before changed), the next not
   * run once nothing is left. Each is one statement whose row locks (or SQLite's one writer) keep concurrent claims
   * from taking one message twice. Where the engine has UPDATE … RETURNING, they return the claimed rows
   * (OUTBOX_COLUMNS).
   */
  claimOutbox(
    lane: OutboxLane,
    claimant: string,
    now: number,
    leaseUntil: number,
  ): ReadonlyArray<(limit: number) => SqlQuery>
  /**
   * The messages of `lane` that `claimant` holds and that are due at `now`, read after claimOutbox; null where
   * claimOutbox returns them.
   */
  claimedOutbox(lane: OutboxLane, claimant: string, now: number): SqlQuery | null
  /**
   * Sets lease_until to `leaseUntil` on the messages `ids` (one or more) that `claimant` holds; where the engine has
   * UPDATE … RETURNING, returns their ids.
   */
  renewOutbox(ids: readonly string[], claimant: string, leaseUntil: number): SqlQuery
  /** The ids of the messages `ids` that `claimant` holds, read after renewOutbox; null where renewOutbox returns them. */
  heldOutbox(ids: readonly string[], claimant: string): SqlQuery | null
  /** Deletes the message if `claimant` holds it. */
  removeOutbox(id: string, claimant: string): SqlQuery
  /** Counts a failed attempt, makes the message due at `nextAttemptAt` and unheld, if `claimant` holds it. */
  failOutbox(id: string, claimant: string, nextAttemptAt: number): SqlQuery
  /** Makes the messages `ids` (one or more) unheld, if `claimant` holds them. */
  releaseOutbox(ids: readonly string[], claimant: string): SqlQuery
  /** Sets next_attempt_at to `until` on the messages of `lane` to `recipient` due before it and unheld at `now`. */
  postponeOutbox(lane: OutboxLane, recipient: string, until: number, now: number): SqlQuery
  /** Deletes the mail (never the webhook events) about `userId` or to `address`. */
  deleteOutbox(userId: string, address: string): SqlQuery
  /** `queued`, the number of messages of `lane`, and `oldest`, the earliest created_at (null when none). */
  outboxStats(lane: OutboxLane): SqlQuery
  /** Per recipient of `lane`: `recipient`, `queued` and `oldest`, as outboxStats. */
  outboxStatsByRecipient(lane: OutboxLane): SqlQuery

  /** Inserts the disabled webhook URL's row (migration 0012); a unique violation when there is one. */
  disableWebhookUrl(urlDigest: string, at: number): SqlQuery
  /** Deletes the disabled webhook URL's row. */
  enableWebhookUrl(urlDigest: string): SqlQuery
  /** Every row of webhook_disabled_urls: url_digest, disabled_at. */
  disabledWebhookUrls(): SqlQuery

  /**
   * Counts one hit on `key` (a storedCounterKey) at `now` in one upsert: the row's window goes on while it ends after
   * `now`, else a new one of `windowMs` starts at 1. The row lock serializes concurrent hits, so each gets its own
   * count. It reports the count and the window's end as a row (hits, window_ends) where the engine has RETURNING,
   * else packed into its LAST_INSERT_ID (rate-counter-rows.ts).
   */
  incrementRateCounter(key: string, windowMs: number, now: number): SqlQuery
  /** Deletes at most `batch` counters whose window ended at or before `now`. */
  pruneRateCounters(now: number, batch: number): SqlQuery

  /**
   * Stores the account's avatar (migration 0006) in one statement that replaces the row of its user_id, id and image
   * included, so that the previous avatar is gone with it. Fails on the foreign key when the account is gone.
   */
  putAvatar(avatar: StoredAvatar): SqlQuery
  /** The avatar's content_type and data by its id (the unique key), or no row. */
  findAvatar(id: string): SqlQuery
  /** Deletes the account's avatar. */
  deleteAvatar(userId: string): SqlQuery

  /** The link of the provider's account (PROVIDER_LINK_COLUMNS), by the primary key, or no row. */
  findProviderLink(provider: string, subject: string): SqlQuery
  /**
   * Inserts the link (migration 0006); fails with a unique violation when the provider's account is linked or the
   * account has an account of that provider, on the foreign key when the account is gone.
   */
  insertProviderLink(link: ProviderLink): SqlQuery
  /** The account's links (PROVIDER_LINK_COLUMNS), in provider order. */
  listProviderLinks(userId: string): SqlQuery
  /** One row if the account has an account of `provider` linked, else none. */
  findProviderLinkOf(userId: string, provider: string): SqlQuery
  /**
   * Deletes the account's link to `provider` only while the account has another way in: a password (a password_hash
   * other than '') or a link to another provider. One row deleted, or none.
   */
  unlinkProvider(userId: string, provider: string): SqlQuery
  /** Deletes every link of the account, whatever its other ways in (an impostor's, docs/api.md §4.15). */
  deleteProviderLinks(userId: string): SqlQuery

  /** Inserts the ticket (migration 0006). */
  putTicket(ticket: { digest: string; kind: TicketKind; payload: string; expiresAt: number }): SqlQuery
  /** The payload of the ticket of `digest` and `kind` if it expires after `now`, or no row. */
  findTicket(digest: string, kind: TicketKind, now: number): SqlQuery
  /**
   * Deletes the ticket of `digest` and `kind`: one row deleted, or none. The row lock serializes concurrent deletes;
   * each after the first finds the row gone and deletes none, which is what lets exactly one take use the ticket.
   */
  deleteTicket(digest: string, kind: TicketKind): SqlQuery
  /** Deletes at most `batch` tickets that expired at or before `now`. */
  pruneTickets(now: number, batch: number): SqlQuery

  /**
   * Locks the account's row until the transaction ends (SELECT … FOR UPDATE on a server), the first statement of the
   * account's writes of several statements (FactorStore.remove, removeAll, replaceRecoveryCodes), so that they run
   * one after another, each seeing what the one before committed; null for SQLite, whose one writer runs each
   * transaction whole, alone.
   */
  lockAccount(userId: string): SqlQuery | null
  /**
   * Inserts the factor (migration 0009: FACTOR_INSERT_COLUMNS, its credential's digest with it); fails with a unique
   * violation when a passkey of that credential is stored (or the id is taken), on the foreign key when the account
   * is gone.
   */
  insertFactor(factor: StoredFactor): SqlQuery
  /** The account's factors (FACTOR_COLUMNS), by created_at, then id. */
  listFactors(userId: string): SqlQuery
  /** The factor (FACTOR_COLUMNS) whose credential digest is `credentialDigest` (the unique index), or no row. */
  findFactorByCredential(credentialDigest: string): SqlQuery
  /**
   * Confirms the account's pending TOTP factor `id`, its step and last use set: one conditional UPDATE that changes
   * one row or none. The row lock serializes concurrent confirmations; the later ones re-read it confirmed, match
   * nothing and change no row.
   */
  confirmFactor(userId: string, id: string, step: number, now: number): SqlQuery
  /**
   * Sets the step and last use of the account's confirmed TOTP factor `id` while its last step is null or below
   * `step`: one conditional UPDATE, serialized by the row lock, so that of concurrent ones with one step the first
   * changes the row and the others re-read the step it set and change none.
   */
  useFactorStep(userId: string, id: string, step: number, now: number): SqlQuery
  /** Sets the passkey's counter to `next`, its backed_up and last use, while its counter is `expected`: one row or none. */
  usePasskey(id: string, expected: number, next: number, backedUp: boolean, now: number): SqlQuery
  /** Deletes the account's factor `id`. */
  deleteFactor(userId: string, id: string): SqlQuery
  /** Deletes the account's recovery codes if it has no confirmed factor. */
  deleteRecoveryCodesWithoutFactor(userId: string): SqlQuery
  /** `confirmed`: how many confirmed factors the account has. */
  countConfirmedFactors(userId: string): SqlQuery
  /** Deletes every factor of the account. */
  deleteFactors(userId: string): SqlQuery
  /**
   * Deletes at most `batch` pending factors created at or before `before`; one confirmed since it was chosen is left
   * (the condition is checked again on the row the deletion locks).
   */
  prunePendingFactors(before: number, batch: number): SqlQuery
  /** Deletes every recovery code of the account. */
  deleteRecoveryCodes(userId: string): SqlQuery
  /** Inserts the account's recovery codes `digests` (one or more); fails on the foreign key when the account is gone. */
  insertRecoveryCodes(userId: string, digests: readonly string[]): SqlQuery
  /**
   * Deletes the account's recovery code `digest`: one row or none. The row lock serializes concurrent deletions; each
   * after the first finds the row gone and deletes none.
   */
  deleteRecoveryCode(userId: string, digest: string): SqlQuery
  /** `codes`: how many recovery codes the account has. */
  countRecoveryCodes(userId: string): SqlQuery

  /** The `value` of the service key `name` (migration 0009), or no row. */
  findServiceKey(name: string): SqlQuery
  /** Inserts the service key unless `name` has one: then nothing changes, and no error. */
  insertServiceKeyIfAbsent(name: string, value: string): SqlQuery
  /** Sets the value of `name` to `value` while it is `expected` (compared byte for byte): one row or none. */
  replaceServiceKey(name: string, expected: string, value: string): SqlQuery
}
