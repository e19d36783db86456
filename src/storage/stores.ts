import type { CodePurpose } from '../code-purpose.js'
import type { SecurityEvent } from '../security-event.js'

export type { CodePurpose } from '../code-purpose.js'
export { ROLE_NAME } from '../role-name.js'

/** A user account as stored (spec 2.1). */
export interface UserRecord {
  /** 10-digit id. */
  id: string
  /** Normalized (trimmed, lower-cased) e-mail; unique. */
  email: string
  /**
   * Argon2id PHC string; null when the account has no usable password: the one set before its address was proved by
   * someone not signed in to it was cancelled (docs/api.md §4.15), or none was ever set. Stored as '' in SQL.
   */
  passwordHash: string | null
  /** Whether the owner of `email` proved it, with a code sent there (migration 0005; false for older accounts). */
  emailVerified: boolean
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string
  /**
   * Migration 0006 (docs/api.md §2.1): unique, 3 to 32 of `a-z 0-9 _ . -` (stored lower-cased); null when unset.
   */
  username: string | null
  /** 1 to 64 characters of text; null when unset. */
  nickname: string | null
  /** At most 500 characters; null when unset. */
  bio: string | null
  /** The id of the account's avatar (AvatarStore): read from `avatars`, never written through the UserStore. */
  avatarId: string | null
  /** `user` (the default) or a role an operator gave (`tessera users set-role`): ROLE_NAME. */
  role: string
  /** A disabled account cannot log in or refresh (`tessera users disable`). */
  status: AccountStatus
  /** ISO 8601 UTC with milliseconds: the latest change of profile, role or status; createdAt at first. */
  updatedAt: string
  /**
   * The names of the providers linked to the account (ProviderLinkStore), sorted: read with the account, never
   * written through the UserStore (create ignores it).
   */
  providers: readonly string[]
}

/**
 * The last-admin rule of docs/api.md R4.27.7 as the stores hold it, `keep` of UserStore.setRole, setStatus and delete:
 * a write that would leave no active account with the role `keep` is not made, atomically across processes. The
 * write is one conditional statement that counts the active accounts of that role (itself among them) and changes
 * the row only while another one remains; on a server it locks those accounts first, in id order, so that of
 * concurrent writes that each take one of the last two away the second waits for the first, then counts again and
 * changes nothing. A write that cannot take the role away (a promotion, an enable, an account without the role) is
 * made whatever the count.
 */
export type KeepRole = string

/** Whether an account may log in (docs/api.md §2.1). */
export type AccountStatus = 'active' | 'disabled'

/** The profile fields an account sets itself (PUT /auth/profile); each null when unset. */
export interface Profile {
  username: string | null
  nickname: string | null
  bio: string | null
}

export type CreateUserResult = 'created' | 'email_taken' | 'id_taken'

/** The accounts. Methods throw StorageError when the backend fails; "not found" is null, never an error. */
export interface UserStore {
  /**
   * Inserts the account. Reports, instead of throwing, when the e-mail or the id is already used, so the caller can
   * answer 409 or draw another id. Two concurrent creations with one e-mail: exactly one is 'created'. A new account
   * has no username (newUserRecord): one is set by updateProfile, which reports it taken (a username another
   * account has makes create fail as 'id_taken').
   */
  create(user: UserRecord): Promise<CreateUserResult>
  findByEmail(email: string): Promise<UserRecord | null>
  findById(id: string): Promise<UserRecord | null>
  /** Replaces the password hash (re-hash, reset, change); null leaves the account without a usable password. */
  updatePasswordHash(id: string, passwordHash: string | null): Promise<void>
  /**
   * The first proof of the address by someone not signed in to the account (docs/api.md §4.15, "an impostor's
   * setup ends"): in one statement, marks the address verified and cancels the password, only if the address was
   * not verified yet. True when it was not (this call made the change), false when it was already verified or there
   * is no such account.
   */
  claimAddress(id: string): Promise<boolean>
  /** Marks the address verified, the password unchanged (POST /auth/email/verify); true when the account exists. */
  markEmailVerified(id: string): Promise<boolean>
  /**
   * Replaces the account's e-mail with `email` (normalized) and marks it verified (POST /auth/email/change).
   * 'email_taken' when another account has it (a unique violation, nothing changed); 'missing' without the account.
   */
  changeEmail(id: string, email: string): Promise<'changed' | 'email_taken' | 'missing'>
  /**
   * At most `limit` accounts in id order, those after the id `after` (all when it is absent): a page of
   * `tessera users list` and GET /admin/users, the next one starting after the last id of this one. With `prefix`
   * (lower case, not empty), only the accounts whose e-mail or username starts with it: a range of each unique
   * index, compared byte for byte (both are stored lower-cased and ASCII, so this is the case-insensitive prefix). A
   * prefix with a character no e-mail or username has (one outside printable ASCII) finds none.
   */
  list(page: { after?: string; limit: number; prefix?: string }): Promise<UserRecord[]>
  /** How many active accounts have the role `role` (what `tessera users` warns about: docs/api.md R4.27.8). */
  countActive(role: string): Promise<number>
  /**
   * Replaces the three profile fields (the caller merged the request into the account's) and sets updated_at.
   * 'username_taken' when another account has the username (a unique violation, nothing changed).
   */
  updateProfile(
    id: string,
    profile: Profile,
    updatedAt: string,
  ): Promise<'updated' | 'username_taken' | 'missing'>
  /**
   * Sets the role (ROLE_NAME) and updated_at; true when the account exists. With `keep` (a role), only when the change
   * leaves an active account with the role `keep` (KEEP_ROLE): false, nothing changed, when it would take the role
   * from the last one.
   */
  setRole(id: string, role: string, updatedAt: string, keep?: KeepRole): Promise<boolean>
  /**
   * Sets the status and updated_at; true when the account exists. With `keep`, only when the change leaves an active
   * account with the role `keep` (KEEP_ROLE): false, nothing changed, when it would disable the last one.
   */
  setStatus(id: string, status: AccountStatus, updatedAt: string, keep?: KeepRole): Promise<boolean>
  /**
   * Deletes the account (`tessera users delete`); true when there was one. In SQL its sessions go with it (a
   * foreign key); sessions in Redis are the caller's to retire first (SessionStore.retire). With `keep`, only when
   * the deletion leaves an active account with the role `keep` (KeepRole): false, nothing deleted, when it would
   * delete the last one. `outbox`, the messages that report the deletion (a webhook event, docs/api.md §6.5), are
   * committed in the same transaction, and only if this call deleted the account: of concurrent deletions of one
   * account, one deletes it and queues its messages.
   */
  delete(id: string, options?: { keep?: KeepRole; outbox?: readonly NewOutboxMessage[] }): Promise<boolean>
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
  /**
   * Whether the session was established with a second factor (or a passkey): set by `start` or later by
   * `markSecondFactor`, kept by every rotation. A session stored before migration 0010 (or by an earlier version in
   * Redis) has it false.
   */
  secondFactor: boolean
}

/** What a rotation writes into the session whose current token it replaces. */
export interface SessionRotation {
  /** The successor's digest and expiry. */
  digest: string
  expiresAt: number
  /** The client's network now (coarsened, as StoredSession.clientAddress). */
  clientAddress: string | null
  /**
   * AUTH_SESSION_LIFETIME_DAYS in milliseconds, or null for none (a session lives while it is refreshed). When set,
   * a session whose createdAt + lifetimeMs is at or before the rotation's `now` is not rotated, and the one rotated
   * stores the earlier of `expiresAt` and createdAt + lifetimeMs as its expiry: both in the rotation's one atomic
   * write, which reads the session's createdAt itself.
   */
  lifetimeMs: number | null
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
   * previousDigest, `now` its rotatedAt and lastUsedAt; secondFactor stays as it is. With `next.lifetimeMs`, a
   * session that has reached its absolute lifetime is not rotated, and the rotated one expires at its end at the
   * latest (SessionRotation.lifetimeMs). Of any number of concurrent calls with the same `currentDigest`, from any
   * number of processes, at most one returns true.
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
  /**
   * Sets the secondFactor flag of the user's session `sessionId` (a second factor was proved in it); true when the
   * user had it (unexpired at `now`), whether or not the flag was set already. Nothing else of the session changes.
   */
  markSecondFactor(userId: string, sessionId: string, now: number): Promise<boolean>
  /** Ends the user's session `sessionId`; true when the user had it (unexpired at `now`). */
  end(userId: string, sessionId: string, now: number): Promise<boolean>
  /** Ends every session of the user, but `except` when given; resolves with how many unexpired ones ended. */
  endAll(userId: string, now: number, except?: string): Promise<number>
  /**
   * endAll, resolving with the ids of the unexpired sessions it ended (what a `session.ended` webhook event names,
   * docs/api.md §6.5), in no order. Called instead of endAll only when those ids are wanted: SQLite, PostgreSQL and
   * Redis return them from the same write, but MySQL, which has no DELETE … RETURNING, reads them first with a
   * locking read in the DELETE's own transaction.
   */
  endAllReturningIds(userId: string, now: number, except?: string): Promise<string[]>
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

/**
 * Whose code it is: the address it was sent to, its purpose, and the account that asked for it (POST
 * /auth/me/send-code) or null (POST /auth/email/send-code). A key holds every code sent for it that has not expired,
 * each with tries of its own (docs/api.md R4.14.2), at most CODES_PER_KEY of them.
 */
export interface CodeKey {
  /** Normalized e-mail address the code was sent to. */
  address: string
  purpose: CodePurpose
  /** The account that asked for it; null for the public purposes. Stored as '' in SQL. */
  userId: string | null
}

/**
 * The most codes one key holds: a code sent past them takes the place of the key's oldest. With the send limits of
 * docs/api.md R8.9 (three sends per address and purpose in a quarter of an hour) and a code's ten minutes, a key
 * never holds more than six; the bound is for the longest EMAIL_CODE_TTL_SECONDS and the highest
 * EMAIL_CODE_HOURLY_LIMIT, and it bounds the row (migration 0007). A key whose codes carry reset keys
 * (`reset_password`) holds fewer: as many of its newest as fit the row's 1,024 characters, never fewer than six.
 */
export const CODES_PER_KEY = 10

/**
 * One-time e-mail codes (docs/api.md §4.14), in the SQL database whatever REDIS_URL says (migrations 0005, 0007). A
 * code is stored only as its keyed digest (HMAC-SHA-256 hex, computed by the caller); a `reset_password` code also
 * has the keyed digest of the reset key mailed with it (R4.14.2), which wrong tries at the codes never use up. Methods
 * throw StorageError when the backend fails.
 */
export interface EmailCodeStore {
  /**
   * Adds a code to `key`, no try used yet, good until `expiresAt`, with `resetKeyDigest`, the digest of the reset key
   * mailed with it (null: none). The key's other codes stay as they are, but those that expired at or before `now`,
   * and, past CODES_PER_KEY or the row's 1,024 characters, the oldest. Of codes put to one key at once, from any
   * number of processes, every one is kept.
   */
  put(
    key: CodeKey,
    digest: string,
    expiresAt: number,
    now: number,
    resetKeyDigest?: string | null,
  ): Promise<void>
  /**
   * One try with `digest` at the codes of `key` that expire after `now` and have had fewer than `maxTries` tries
   * (the open ones). None open: false, nothing counted. One of them has `digest`: every code of the key is used up
   * (removed), true. Else one try is counted on each open code, false; reset keys are neither checked nor touched.
   * Atomic: of concurrent tries, from any number of processes, at most `maxTries` are ever counted on one code, and
   * at most one resolves true for as long as no new code is put.
   */
  take(key: CodeKey, digest: string, now: number, maxTries: number): Promise<boolean>
  /**
   * One try with a reset key's digest at the codes of `key` that expire after `now`, whatever their tries: one of them
   * was put with `resetKeyDigest`: every code of the key is used up (removed), true. Else false, and nothing is
   * counted or changed: a wrong reset key uses up nothing. Atomic as `take`: of concurrent tries, at most one resolves
   * true (with a code of the key or a reset key) for as long as no new code is put.
   */
  takeResetKey(key: CodeKey, resetKeyDigest: string, now: number): Promise<boolean>
  /** Removes every code asked for by the account `userId` or sent to `address` (account deletion). */
  deleteFor(userId: string, address: string): Promise<void>
  /** Removes the keys whose every code expired at or before `now`, in bounded batches; resolves with how many. */
  prune(now: number): Promise<number>
}

/** An avatar as stored (docs/api.md §4.23): the re-encoded image, never the uploaded file. */
export interface StoredAvatar {
  /** 32 lowercase hexadecimal digits, random: a new one for each upload (the URL is cached for ever). */
  id: string
  userId: string
  contentType: 'image/jpeg' | 'image/png' | 'image/webp'
  data: Buffer
  /** Epoch milliseconds. */
  createdAt: number
}

/**
 * Avatars (migration 0006), in the SQL database whatever REDIS_URL says, so that every instance serves each one. An
 * account has at most one: a row keyed by user id, whose id changes with each upload. Methods throw StorageError when
 * the backend fails.
 */
export interface AvatarStore {
  /**
   * Stores the account's avatar, replacing its previous one (removed in the same statement, an upsert on the user
   * id). False, with nothing stored, when there is no such account (a foreign key).
   */
  put(avatar: StoredAvatar): Promise<boolean>
  /** The avatar with this id, or null. */
  get(id: string): Promise<Pick<StoredAvatar, 'contentType' | 'data'> | null>
  /** Removes the account's avatar; true when it had one. */
  delete(userId: string): Promise<boolean>
}

/** An account at a provider, linked to an account here (docs/api.md §4.24). */
export interface ProviderLink {
  /** The provider's name as configured (`google`, `github`, a generic OpenID provider's name). */
  provider: string
  /** The provider's id of its account (OpenID Connect `sub`, GitHub's numeric user id as text); at most 255. */
  subject: string
  userId: string
  /** The provider account's e-mail address when linked (normalized), for the operator; null when it gave none. */
  email: string | null
  /** Epoch milliseconds. */
  createdAt: number
}

/**
 * Links between provider accounts and accounts (migration 0006: `oauth_accounts`), in the SQL database. A provider
 * account is linked to at most one account, and an account to at most one account of each provider. Methods throw
 * StorageError when the backend fails.
 */
export interface ProviderLinkStore {
  /** The link of the provider's account `subject`, or null. */
  find(provider: string, subject: string): Promise<ProviderLink | null>
  /**
   * Links them. 'taken' when the provider account is linked already or the account has an account of that provider
   * (a unique violation, nothing changed); 'missing' when there is no such account (a foreign key).
   */
  link(link: ProviderLink): Promise<'linked' | 'taken' | 'missing'>
  /**
   * Unlinks the account's account of `provider` in one conditional statement, unless that is the account's only way
   * in (no password, no other provider): 'only_way_in', nothing changed. 'not_linked' when there was none.
   */
  unlink(userId: string, provider: string): Promise<'unlinked' | 'not_linked' | 'only_way_in'>
  /** The account's links, by provider name. */
  list(userId: string): Promise<ProviderLink[]>
  /**
   * Removes every link of the account, whatever its other ways in: an impostor's links end with the first proof of
   * the address (docs/api.md §4.15), like the password. Resolves with how many.
   */
  unlinkAll(userId: string): Promise<number>
}

/**
 * What a one-time ticket is for: a provider sign-in in progress, or a code to exchange for its answer (docs/api.md
 * §4.24); a second-factor challenge, or a passkey ceremony's challenge (§4.25).
 */
export type TicketKind = 'oauth_state' | 'oauth_exchange' | 'mfa_challenge' | 'passkey_challenge'

/**
 * One-time tickets (migration 0006: `oauth_tickets`), in the SQL database, shared by every instance: the state of a
 * provider sign-in between its start and its callback, and the one-time code of `redirect_to`. A ticket is stored
 * under a keyed digest of its secret (computed by the caller) with an opaque payload (sealed by the caller when it
 * holds secrets). Methods throw StorageError when the backend fails.
 */
export interface TicketStore {
  /**
   * Stores the ticket: `digest` 64 lowercase hexadecimal digits, new (a digest stored already fails), `payload` at
   * most 4096 characters (a longer one fails: the column's bound), `expiresAt` epoch milliseconds.
   */
  put(ticket: { digest: string; kind: TicketKind; payload: string; expiresAt: number }): Promise<void>
  /**
   * Uses up the ticket of `digest` and `kind` if it expires after `now`: resolves with its payload and removes it.
   * Of concurrent takes from any number of processes, at most one resolves with the payload; the others null.
   */
  take(digest: string, kind: TicketKind, now: number): Promise<string | null>
  /** Removes the tickets that expired at or before `now`; resolves with how many. */
  prune(now: number): Promise<number>
}

/** The kinds of second factor (docs/api.md §4.25). */
export type FactorType = 'totp' | 'passkey'

/** A second factor of an account (docs/api.md §4.25). */
export interface StoredFactor {
  /** 32 lowercase hexadecimal digits, random. */
  id: string
  userId: string
  type: FactorType
  /** 1 to 64 characters: 'Authenticator app', or the passkey's name. */
  name: string
  /** False for a TOTP factor set up but not confirmed yet: it counts for nothing until confirmed. Passkeys: true. */
  confirmed: boolean
  /** TOTP: the secret, sealed by the caller (opaque ASCII, at most 512 characters); null for a passkey. */
  secret: string | null
  /** TOTP: the time step (RFC 6238 T) of the latest code accepted; null before any. Passkeys: null. */
  lastStep: number | null
  /**
   * Passkey: the credential id, base64url (at most 1,366 characters); null for TOTP. Unique over all accounts: the
   * store keeps a unique index on its SHA-256 hex digest (MySQL cannot index 1,366 characters).
   */
  credentialId: string | null
  /** Passkey: the COSE public key, base64url (at most 2,048 characters); null for TOTP. */
  publicKey: string | null
  /** Passkey: the signature counter last seen; 0 for TOTP. */
  counter: number
  /** Passkey: whether the credential is backed up (synced), as last seen; false for TOTP. */
  backedUp: boolean
  /**
   * Passkey: the transports the browser reported (e.g. ['internal','hybrid']), in its order; [] for TOTP. Stored as a
   * JSON array of at most 255 characters (a longer one fails: the column's bound).
   */
  transports: readonly string[]
  /** Epoch milliseconds. */
  createdAt: number
  /** Epoch milliseconds of the latest use (sign-in, confirmation); null before any. */
  lastUsedAt: number | null
}

/**
 * Second factors and recovery codes (migration 0009: `mfa_factors`, `mfa_recovery_codes`), in the SQL database
 * whatever REDIS_URL says, like the account they belong to: its deletion removes them (a foreign key). A recovery code
 * is stored only as its keyed digest (64 lowercase hexadecimal digits, computed by the caller). The one-time rules
 * (a TOTP step, a recovery code, a passkey's counter) are each one conditional statement, so that they hold across
 * any number of processes. Methods throw StorageError when the backend fails; "not found" is null or false.
 */
export interface FactorStore {
  /**
   * Stores a new factor. 'missing' when there is no such account (a foreign key); 'taken' when a passkey with that
   * credential id is stored already, for any account (the unique index on the digest of the credential id), or when
   * its id is another factor's (which random ids of 128 bits never are). Nothing is stored in either case.
   */
  add(factor: StoredFactor): Promise<'added' | 'missing' | 'taken'>
  /** The account's factors, confirmed and pending, oldest first (createdAt, then id). */
  list(userId: string): Promise<StoredFactor[]>
  /** The passkey with this credential id, whatever its account, or null. */
  findPasskey(credentialId: string): Promise<StoredFactor | null>
  /**
   * Confirms the account's pending TOTP factor `id`: confirmed, lastStep = step, lastUsedAt = now, in one conditional
   * UPDATE. True when this call confirmed it; false when there is no such pending factor (confirmed already, pruned,
   * another account's, a passkey). Of concurrent calls, at most one true.
   */
  confirm(userId: string, id: string, step: number, now: number): Promise<boolean>
  /**
   * Accepts a code of time step `step` on the account's confirmed TOTP factor `id`: sets lastStep = step and
   * lastUsedAt = now only when lastStep is null or below `step` (one conditional UPDATE). True when it did. Of
   * concurrent calls with the same step, from any number of processes, at most one true: no code is accepted twice,
   * nor one of a step before the latest accepted.
   */
  useStep(userId: string, id: string, step: number, now: number): Promise<boolean>
  /**
   * Records a passkey assertion on the passkey `id`: its counter becomes `next`, backedUp and lastUsedAt are set,
   * only while the stored counter is still `expected` (a compare-and-swap). True when it did. Of concurrent calls
   * with one `expected` and a `next` other than it, at most one true.
   */
  usePasskey(id: string, expected: number, next: number, backedUp: boolean, now: number): Promise<boolean>
  /**
   * Removes the account's factor `id`; then, when the account has no confirmed factor left, its recovery codes too,
   * in the same transaction (serialized with the account's other removals and replacements of codes, so that of
   * concurrent removals of its last confirmed factors one sees none left). Resolves with whether it removed one and
   * how many confirmed factors the account has afterwards.
   */
  remove(userId: string, id: string): Promise<{ removed: boolean; remaining: number }>
  /**
   * Removes every factor and recovery code of the account, in one transaction (the claim of its address by the
   * owner, docs/api.md §4.15; `tessera users mfa-reset`); resolves with how many factors.
   */
  removeAll(userId: string): Promise<number>
  /** Removes the pending (unconfirmed) factors created at or before `before`, in bounded batches; resolves with how many. */
  prunePending(before: number): Promise<number>
  /**
   * Replaces the account's recovery codes with `digests` (each 64 lowercase hexadecimal digits, distinct; none leaves
   * the account without codes), in one transaction: useRecoveryCode sees the old set or the new one, never both or
   * neither, and of concurrent replacements one set remains. Fails (StorageError, nothing changed) when there is no
   * such account and `digests` is not empty (a foreign key).
   */
  replaceRecoveryCodes(userId: string, digests: readonly string[]): Promise<void>
  /**
   * Uses up the account's recovery code of `digest` (deletes it). True when it had it; of concurrent calls from any
   * number of processes, at most one true.
   */
  useRecoveryCode(userId: string, digest: string): Promise<boolean>
  /** How many recovery codes the account has left. */
  recoveryCodesLeft(userId: string): Promise<number>
}

/**
 * Keys the service keeps in its SQL database, shared by every instance, each sealed by the caller (migration 0009:
 * `service_keys`). A key is never removed. Methods throw StorageError when the backend fails.
 */
export interface ServiceKeyStore {
  /** The value stored under `name` (1 to 32 of a-z 0-9 _ -), or null. */
  get(name: string): Promise<string | null>
  /**
   * Stores `value` (ASCII, at most 512 characters) under `name` unless one is stored; resolves with the value stored
   * afterwards: this one, or the one another process stored first. Of concurrent calls, from any number of
   * processes, every one resolves with the same value (as long as no replace comes between).
   */
  putIfAbsent(name: string, value: string): Promise<string>
  /**
   * Replaces the value of `name` with `value` only while it is still `expected` (compared exactly, byte for byte);
   * true when it did. Of concurrent calls with one `expected` and values other than it, at most one true.
   */
  replace(name: string, expected: string, value: string): Promise<boolean>
}

/**
 * The lanes of the outbox, the one delivery queue (docs/api.md §6.4, §6.5): each is claimed on its own, by a sender
 * of its own, so that one whose deliveries are slow never holds the other back. `mail` goes by SMTP, `webhook` by
 * HTTP.
 */
export const OUTBOX_LANES = ['mail', 'webhook'] as const
export type OutboxLane = (typeof OUTBOX_LANES)[number]

/** A message waiting in the outbox (docs/api.md §6.4, §6.5). */
export interface OutboxMessage {
  /**
   * 32 lowercase hexadecimal digits, random; also the mail's Message-ID, or the event's `webhook-id`, so a duplicate
   * can be recognized.
   */
  id: string
  /** Its lane: how it leaves. */
  lane: OutboxLane
  /**
   * The account the message is about, when there is one: its deletion removes the message. Null for mail to an
   * address without an account, and for every webhook event (an account's deletion never removes its events).
   */
  userId: string | null
  /**
   * Where it goes: for mail, the normalized e-mail address; for an event, the SHA-256 (64 lowercase hexadecimal
   * digits) of the webhook URL, never the URL (it may carry credentials).
   */
  recipient: string
  /**
   * The message as its domain wrote it, opaque here: a mail sealed (encrypted and authenticated), at most 8 KiB of
   * ASCII; an event's JSON body as it is posted, at most 32 KiB of UTF-8.
   */
  payload: string
  /** Epoch milliseconds: when it was queued. */
  createdAt: number
  /**
   * Epoch milliseconds: when the code it carries expires, for a code; null for anything else. What orders the claim
   * (the newest codes first) without opening the payload.
   */
  codeExpiresAt: number | null
  /** Delivery attempts that failed so far. */
  attempts: number
  /** Epoch milliseconds: not to be tried before then. */
  nextAttemptAt: number
}

/** A message as it is queued: what the sender of the moment it is delivered needs of it. */
export type NewOutboxMessage = Pick<
  OutboxMessage,
  'id' | 'lane' | 'userId' | 'recipient' | 'payload' | 'createdAt' | 'codeExpiresAt'
>

/** What waits in one lane of the outbox, for one recipient or all of them. */
export interface OutboxCount {
  /** How many messages wait. */
  queued: number
  /** When the longest waiting one was queued (epoch ms); null when none. */
  oldestCreatedAt: number | null
}

/**
 * The outbox (docs/api.md §6.4, §6.5), in the SQL database whatever REDIS_URL says (migration 0005; its lanes
 * migration 0012): the one durable delivery queue of the service, what makes a mail or an event the answer said was
 * made impossible to lose. Its lanes are claimed apart; everything else is the same machinery for both: claims,
 * leases, retries. Methods throw StorageError when the backend fails.
 */
export interface OutboxStore {
  /** Commits the message (attempts 0, due at once); resolves once it is durable. */
  enqueue(message: NewOutboxMessage): Promise<void>
  /** Commits the messages in one transaction, all of them or none (attempts 0, due at once); resolves once durable. */
  enqueueAll(messages: readonly NewOutboxMessage[]): Promise<void>
  /**
   * Claims at most `limit` messages of `lane` due at `now` (nextAttemptAt at or before it) that nobody holds (no
   * claim, or a claim whose lease ended at or before `now`), for `claimant` (a random value of this call) until
   * `leaseUntil`; resolves with them in claim order: first those that are not codes (codeExpiresAt null), the longest
   * due first (by nextAttemptAt, then id); then the codes, the latest expiry first (by codeExpiresAt, then
   * nextAttemptAt, then id, each descending). Of concurrent claims from any number of processes, each message goes to
   * at most one.
   */
  claim(
    lane: OutboxLane,
    claimant: string,
    now: number,
    leaseUntil: number,
    limit: number,
  ): Promise<OutboxMessage[]>
  /**
   * Extends to `leaseUntil` the claim of `claimant` on each message of `ids` it still holds (no other claim took it
   * since, whether or not its lease had ended; it was not removed, failed or released); resolves with their ids.
   */
  renew(ids: readonly string[], claimant: string, leaseUntil: number): Promise<string[]>
  /** Removes the message (delivered, or given up) if `claimant` still holds it; true when it did. */
  remove(id: string, claimant: string): Promise<boolean>
  /** A delivery failed: counts the attempt, makes it due at `nextAttemptAt` and releases the claim, if held. */
  failed(id: string, claimant: string, nextAttemptAt: number): Promise<void>
  /** Releases the claim of messages not tried after all, if held: due again at once, no attempt counted. */
  release(ids: readonly string[], claimant: string): Promise<void>
  /**
   * Makes the messages of `lane` to `recipient` that nobody holds at `now` due no earlier than `until`, no attempt
   * counted: what a receiver that fails puts off, so that its backlog does not take every delivery slot. Resolves with
   * how many it put off.
   */
  postpone(lane: OutboxLane, recipient: string, until: number, now: number): Promise<number>
  /**
   * Removes every mail about the account `userId` or to `address` (account deletion); resolves with how many. Never
   * an event of the webhook lane.
   */
  deleteFor(userId: string, address: string): Promise<number>
  /** What waits in `lane`. */
  stats(lane: OutboxLane): Promise<OutboxCount>
  /** What waits in `lane`, by recipient (those with nothing waiting are absent). */
  statsByRecipient(lane: OutboxLane): Promise<Map<string, OutboxCount>>
}

/** A webhook URL disabled by its receiver's 410 Gone (docs/api.md R6.5.5). */
export interface DisabledWebhookUrl {
  /** The SHA-256 (64 lowercase hexadecimal digits) of the URL: the store never holds the URL. */
  urlDigest: string
  /** Epoch milliseconds: when it was disabled. */
  disabledAt: number
}

/**
 * The webhook URLs that are disabled, in the SQL database (migration 0012), shared by every instance and kept across
 * restarts. Methods throw StorageError when the backend fails.
 */
export interface WebhookUrlStore {
  /** Records the URL of `urlDigest` as disabled at `at`, unless it is already; true when this call disabled it. */
  disable(urlDigest: string, at: number): Promise<boolean>
  /** Removes the URL's record; true when there was one. */
  enable(urlDigest: string): Promise<boolean>
  /** Every disabled URL. */
  disabled(): Promise<DisabledWebhookUrl[]>
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
  /**
   * Removes the counters whose window ended at or before `now` (epoch ms); resolves with how many. Only where ended
   * windows stay until removed: the SQL table of Stores.sharedCounters (migration 0005), which whoever runs the
   * periodic pruning calls it on. Absent where they expire on their own (Redis, a process's memory).
   */
  prune?(now: number): Promise<number>
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

/** An event of the audit trail as stored: the event and its row's id, which orders events of one millisecond. */
export interface StoredAuditEvent extends SecurityEvent {
  /** The row's id (decimal digits): higher for an event appended later. */
  id: string
}

/** Where a page of the audit trail starts: after the event at `at` (epoch ms) with the row id `id`, newest first. */
export interface AuditPosition {
  at: number
  id: number
}

/** A filter and a page of the audit trail (AuditStore.page). */
export interface AuditPageQuery {
  /** Only the events of this user (its id). */
  userId?: string
  /** Only the events of this type (SecurityEventType; another text finds none). */
  kind?: string
  /** Only the events at or after this time (epoch ms). */
  since?: number
  /** Only the events that come after this one, newest first: the last event of the page before. */
  after?: AuditPosition
  limit: number
}

/** The audit trail (docs/api.md "Audit events"), in the SQL store whatever REDIS_URL says. */
export interface AuditStore {
  /**
   * How many events one append is best given: the audit sink's batch, unless its settings say otherwise. What a
   * batch costs differs by engine (docs/performance.md): a database server pays a batch's round trips and commit once,
   * whatever its size, while SQLite gains nothing from larger batches and holds them longer in memory.
   */
  readonly batchRows: number
  /** Appends the events in one statement (a multi-row insert). */
  append(events: readonly SecurityEvent[]): Promise<void>
  /**
   * The user's events at or after `since` (epoch ms), oldest first, at most `limit`. When more match, the latest
   * `limit` of them.
   */
  list(query: { userId: string; since?: number; limit?: number }): Promise<SecurityEvent[]>
  /**
   * At most `limit` events that match the query, newest first (by time, then by row id, both descending): a keyset
   * page, the next one starting after the last event of this one. Served by an index whatever the filter: the
   * user's, the kind's or the time's (migration 0011).
   */
  page(query: AuditPageQuery): Promise<StoredAuditEvent[]>
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
  /**
   * The accounts: always the SQL database; with them the avatars, the provider links, the one-time tickets, the
   * second factors and the service keys (Stores.avatars, providerLinks, tickets, factors, serviceKeys), always in the
   * same database.
   */
  users: DatabaseEngine
  /** The sessions: the SQL database, or Redis when REDIS_URL is set. */
  sessions: StoreEngine
  /** The audit trail: always the SQL database, whatever REDIS_URL says. */
  audit: DatabaseEngine
  /** The e-mail codes, the outbox and the disabled webhook URLs (Stores.webhookUrls): always the SQL database. */
  mail: DatabaseEngine
  /** Redis when REDIS_URL is set, else the SQL database. */
  sharedCounters: StoreEngine
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
  /**
   * Hit counters shared by every instance in every configuration: Redis's when REDIS_URL is set, else a table of
   * the SQL database (migration 0005). The e-mail send limits count with them (docs/api.md R8.8).
   */
  sharedCounters: RateCounterStore
  /** One-time e-mail codes, in the SQL database. */
  codes: EmailCodeStore
  /** Mail and webhook events waiting to be delivered, in the SQL database. */
  outbox: OutboxStore
  /** The webhook URLs disabled by a 410, in the SQL database (migration 0012). */
  webhookUrls: WebhookUrlStore
  /** Avatars, in the SQL database (migration 0006). */
  avatars: AvatarStore
  /** Links to provider accounts, in the SQL database (migration 0006). */
  providerLinks: ProviderLinkStore
  /** Provider sign-in states and exchange codes, in the SQL database (migration 0006). */
  tickets: TicketStore
  /** Second factors and recovery codes, in the SQL database (migration 0009). */
  factors: FactorStore
  /** Keys the service keeps, sealed, in the SQL database (migration 0009). */
  serviceKeys: ServiceKeyStore
  /** Login attempts shared by every instance (in Redis); null when each process counts for itself. */
  loginAttempts: LoginAttemptStore | null
  /** Which engine holds each of these stores. */
  placement: StorePlacement
  /** A description for the start-up log line, without credentials. */
  description: string
  /** Closes every connection. */
  close(): Promise<void>
}
