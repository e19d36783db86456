import { OUTBOX_INSERT_COLUMNS, outboxValues } from './mail-rows.js'
import { PROVIDER_LINK_COLUMNS, providerLinkValues, TICKET_COLUMNS } from './oauth-rows.js'
import type { SqlStatements } from './sql-statements.js'
import { USER_COLUMNS, USER_PLACEHOLDERS, userSelectList, userValues } from './user-rows.js'

/**
 * The reads of an account, with `?` placeholders, whose text differs between engines only in `providers`: the
 * aggregate of the account's provider names (userSelectList), which each engine's statements.ts spells its own way.
 */
export function questionMarkUserReads(
  providers: string,
  bytes = '',
): Pick<
  SqlStatements,
  'findUsersByIds' | 'findUserByEmail' | 'listUsers' | 'searchUsers' | 'countActiveUsers'
> {
  const select = `SELECT ${userSelectList(providers)} FROM users`
  return {
    findUsersByIds: (ids) => {
      // as many placeholders as the next power of two, the last id repeated in the rest: a text for 1, 2, 4, 8 …
      // ids, not one for every count (SQLite prepares, and PostgreSQL names, each text once)
      const placeholders = 2 ** Math.ceil(Math.log2(Math.max(1, ids.length)))
      const parameters = Array.from({ length: placeholders }, (_, i) => ids[Math.min(i, ids.length - 1)])
      return { sql: `${select} WHERE id IN (${parameters.map(() => '?').join(', ')})`, parameters }
    },
    findUserByEmail: (email) => ({ sql: `${select} WHERE email = ?`, parameters: [email] }),
    // ids are 10 digits without a leading 0, so their text order is their numeric order
    listUsers: (after, limit) => ({
      sql: `${select} WHERE id > ? ORDER BY id LIMIT ?`,
      parameters: [after, limit],
    }),
    // `bytes`: PostgreSQL's COLLATE "C", the byte order of its indexes users_email_bytes and users_username_bytes;
    // SQLite's BINARY and MySQL's utf8mb4_bin compare so already
    searchUsers: ({ from, to }, after, limit) => ({
      sql: `${select} WHERE id > ? AND ((email${bytes} >= ? AND email${bytes} < ?)
        OR (username${bytes} >= ? AND username${bytes} < ?)) ORDER BY id LIMIT ?`,
      parameters: [after, from, to, from, to, limit],
    }),
    countActiveUsers: (role) => ({
      sql: "SELECT COUNT(*) AS active FROM users WHERE role = ? AND status = 'active'",
      parameters: [role],
    }),
  }
}

/**
 * The writes under the last-admin rule (KeepRole, stores.ts), with `?` placeholders: each one conditional statement,
 * whose condition `activeWithRole` counts the active accounts with the role `keep` (the row itself among them), in
 * each engine's SQL: SQLite's one writer runs the statement alone, where a server locks the accounts it counts.
 */
export function questionMarkKeepingWrites(
  activeWithRole: string,
  /** The values of a new outbox row as a SELECT list: PostgreSQL casts the BIGINT ones. */
  outboxSelect = '?, ?, ?, ?, ?, ?, ?, ?',
): Pick<
  SqlStatements,
  'setUserRoleKeeping' | 'setUserStatusKeeping' | 'deleteUserKeeping' | 'enqueueOutboxIfUserKeeping'
> {
  const keeping = `(role <> ? OR status <> 'active' OR (${activeWithRole}) > 1)`
  return {
    setUserRoleKeeping: (id, role, updatedAt, keep) => ({
      sql: `UPDATE users SET role = ?, updated_at = ? WHERE id = ? AND ${keeping}`,
      parameters: [role, updatedAt, id, keep, keep],
    }),
    setUserStatusKeeping: (id, status, updatedAt, keep) => ({
      sql: `UPDATE users SET status = ?, updated_at = ? WHERE id = ? AND ${keeping}`,
      parameters: [status, updatedAt, id, keep, keep],
    }),
    deleteUserKeeping: (id, keep) => ({
      sql: `DELETE FROM users WHERE id = ? AND ${keeping}`,
      parameters: [id, keep, keep],
    }),
    enqueueOutboxIfUserKeeping: (userId, message, keep) => ({
      sql: `INSERT INTO outbox (${OUTBOX_INSERT_COLUMNS}) SELECT ${outboxSelect} FROM users WHERE id = ? AND ${keeping}`,
      parameters: [...outboxValues(message), userId, keep, keep],
    }),
  }
}

/**
 * The statements of the accounts' writes, and of the provider links and tickets (migration 0006), that the three
 * engines write alike, with `?` placeholders (PostgreSQL numbers them: withNumberedPlaceholders). The avatar's
 * upsert, the unlink's condition and the tickets' pruning differ, and are in each engine's statements.ts.
 */
export const questionMarkAccountStatements: Pick<
  SqlStatements,
  | 'insertUser'
  | 'updateUserProfile'
  | 'setUserRole'
  | 'setUserStatus'
  | 'findAvatar'
  | 'deleteAvatar'
  | 'findProviderLink'
  | 'insertProviderLink'
  | 'listProviderLinks'
  | 'findProviderLinkOf'
  | 'deleteProviderLinks'
  | 'putTicket'
  | 'findTicket'
  | 'deleteTicket'
> = {
  insertUser: (user) => ({
    sql: `INSERT INTO users (${USER_COLUMNS}) VALUES (${USER_PLACEHOLDERS})`,
    parameters: userValues(user),
  }),
  updateUserProfile: (id, profile, updatedAt) => ({
    sql: 'UPDATE users SET username = ?, nickname = ?, bio = ?, updated_at = ? WHERE id = ?',
    parameters: [profile.username, profile.nickname, profile.bio, updatedAt, id],
  }),
  setUserRole: (id, role, updatedAt) => ({
    sql: 'UPDATE users SET role = ?, updated_at = ? WHERE id = ?',
    parameters: [role, updatedAt, id],
  }),
  setUserStatus: (id, status, updatedAt) => ({
    sql: 'UPDATE users SET status = ?, updated_at = ? WHERE id = ?',
    parameters: [status, updatedAt, id],
  }),
  findAvatar: (id) => ({
    sql: 'SELECT content_type, data FROM avatars WHERE id = ?',
    parameters: [id],
  }),
  deleteAvatar: (userId) => ({
    sql: 'DELETE FROM avatars WHERE user_id = ?',
    parameters: [userId],
  }),
  findProviderLink: (provider, subject) => ({
    sql: `SELECT ${PROVIDER_LINK_COLUMNS} FROM oauth_accounts WHERE provider = ? AND subject = ?`,
    parameters: [provider, subject],
  }),
  insertProviderLink: (link) => ({
    sql: `INSERT INTO oauth_accounts (${PROVIDER_LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?)`,
    parameters: providerLinkValues(link),
  }),
  // the unique key (user_id, provider) serves it, in its order
  listProviderLinks: (userId) => ({
    sql: `SELECT ${PROVIDER_LINK_COLUMNS} FROM oauth_accounts WHERE user_id = ? ORDER BY provider`,
    parameters: [userId],
  }),
  findProviderLinkOf: (userId, provider) => ({
    sql: 'SELECT subject FROM oauth_accounts WHERE user_id = ? AND provider = ?',
    parameters: [userId, provider],
  }),
  deleteProviderLinks: (userId) => ({
    sql: 'DELETE FROM oauth_accounts WHERE user_id = ?',
    parameters: [userId],
  }),
  putTicket: (ticket) => ({
    sql: `INSERT INTO oauth_tickets (${TICKET_COLUMNS}) VALUES (?, ?, ?, ?)`,
    parameters: [ticket.digest, ticket.kind, ticket.payload, ticket.expiresAt],
  }),
  findTicket: (digest, kind, now) => ({
    sql: 'SELECT payload FROM oauth_tickets WHERE digest = ? AND kind = ? AND expires_at > ?',
    parameters: [digest, kind, now],
  }),
  deleteTicket: (digest, kind) => ({
    sql: 'DELETE FROM oauth_tickets WHERE digest = ? AND kind = ?',
    parameters: [digest, kind],
  }),
}
