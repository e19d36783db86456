import { batchedReads } from '../../batched-reads.js'
import type { StorageCall } from '../storage-call.js'
import type { UserStore } from '../stores.js'
import type { SqlDatabase } from './sql-database.js'
import type { SqlQuery } from './sql-statements.js'
import { prefixRange, storedPasswordHash, toUser } from './user-rows.js'

/**
 * The most accounts one read by id fetches: the number of requests a busy turn of the event loop holds is well
 * below it, and its 64 placeholders are within what PostgreSQL names (postgres-database.ts).
 */
const MAX_IDS_A_READ = 64

/** UserStore in the `users` table of any SQL engine, with that engine's statements. */
export function createSqlUserStore(database: SqlDatabase, call: StorageCall): UserStore {
  const { statements } = database
  // the reads by id of one turn (GET /auth/me and every other route that reads the caller's account) are one
  // statement: batched-reads.ts
  const rowById = batchedReads(async (ids) => {
    const { sql, parameters } = statements.findUsersByIds(ids)
    const { rows } = await call('users.findById', () => database.run(sql, parameters))
    return new Map(rows.map((row) => [String(row.id), row]))
  }, MAX_IDS_A_READ)

  const findOne = async (operation: string, { sql, parameters }: SqlQuery) => {
    const { rows } = await call(operation, () => database.run(sql, parameters))
    const [row] = rows
    return row === undefined ? null : toUser(row)
  }
  const findByEmail = (email: string) => findOne('users.findByEmail', statements.findUserByEmail(email))
  /** Runs the write; how many rows it changed. */
  const write = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, (attempt) => database.write(sql, parameters, attempt))).changes
  /** Runs the write; false instead of the error when it violates a unique constraint (nothing was written). */
  const writeUnlessTaken = (operation: string, { sql, parameters }: SqlQuery) =>
    call(operation, (attempt) =>
      database.write(sql, parameters, attempt).then(
        (result) => result.changes,
        (error: unknown) => {
          if (database.isUniqueViolation(error)) return false
          throw error
        },
      ),
    )

  return {
    async create(user) {
      if ((await writeUnlessTaken('users.create', statements.insertUser(user))) !== false) return 'created'
      // which constraint failed is read back rather than parsed from engine-specific error text
      return (await findByEmail(user.email)) ? 'email_taken' : 'id_taken'
    },
    findByEmail,
    async findById(id) {
      const row = await rowById(id)
      return row === undefined ? null : toUser(row)
    },
    async updatePasswordHash(id, passwordHash) {
      await write(
        'users.updatePasswordHash',
        statements.updatePasswordHash(id, storedPasswordHash(passwordHash)),
      )
    },
    // one conditional UPDATE: of concurrent claims, the row lock lets one change the row and the others match none
    async claimAddress(id) {
      return (await write('users.claimAddress', statements.claimAddress(id))) === 1
    },
    async markEmailVerified(id) {
      return (await write('users.markEmailVerified', statements.markEmailVerified(id))) === 1
    },
    // the only unique constraint an UPDATE of the e-mail can violate is the e-mail's, of another account's row
    async changeEmail(id, email) {
      const changed = await writeUnlessTaken('users.changeEmail', statements.changeEmail(id, email))
      if (changed === false) return 'email_taken'
      return changed === 1 ? 'changed' : 'missing'
    },
    async list({ after = '', limit, prefix = '' }) {
      const range = prefix === '' ? undefined : prefixRange(prefix)
      if (range === null) return []
      const { sql, parameters } =
        range === undefined ? statements.listUsers(after, limit) : statements.searchUsers(range, after, limit)
      const { rows } = await call('users.list', () => database.run(sql, parameters))
      return rows.map(toUser)
    },
    async countActive(role) {
      const { sql, parameters } = statements.countActiveUsers(role)
      const { rows } = await call('users.countActive', () => database.run(sql, parameters))
      // PostgreSQL counts in a BIGINT, returned as a string
      return Number(rows[0]?.active ?? 0)
    },
    // the only unique constraint an UPDATE of the profile can violate is the username's, of another account's row
    async updateProfile(id, profile, updatedAt) {
      const changed = await writeUnlessTaken(
        'users.updateProfile',
        statements.updateUserProfile(id, profile, updatedAt),
      )
      if (changed === false) return 'username_taken'
      return changed === 1 ? 'updated' : 'missing'
    },
    // with `keep`, the conditional write of KeepRole only where the change could take the role from its last active
    // account: a promotion to `keep`, or an enable, never can
    async setRole(id, role, updatedAt, keep) {
      const query =
        keep === undefined || role === keep
          ? statements.setUserRole(id, role, updatedAt)
          : statements.setUserRoleKeeping(id, role, updatedAt, keep)
      return (await write('users.setRole', query)) === 1
    },
    async setStatus(id, status, updatedAt, keep) {
      const query =
        keep === undefined || status === 'active'
          ? statements.setUserStatus(id, status, updatedAt)
          : statements.setUserStatusKeeping(id, status, updatedAt, keep)
      return (await write('users.setStatus', query)) === 1
    },
    async delete(id, { keep, outbox = [] } = {}) {
      const removal = keep === undefined ? statements.deleteUser(id) : statements.deleteUserKeeping(id, keep)
      if (outbox.length === 0) return (await write('users.delete', removal)) === 1
      // the account locked first (SQLite's one writer runs the transaction whole), so that of concurrent deletions
      // only the one that deletes it finds it and queues the messages; with `keep`, each message under the
      // deletion's own condition, evaluated in the same transaction under the same locks
      const lock = statements.lockAccount(id)
      const queries = [
        ...(lock === null ? [] : [lock]),
        ...outbox.map((message) =>
          keep === undefined
            ? statements.enqueueOutboxIfUser(id, message)
            : statements.enqueueOutboxIfUserKeeping(id, message, keep),
        ),
        removal,
      ]
      const results = await call('users.delete', (attempt) => database.writeAll(queries, attempt))
      return results.at(-1)?.changes === 1
    },
  }
}
