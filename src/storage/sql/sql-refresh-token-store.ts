import { StorageError } from '../../errors.js'
import type { StorageCall } from '../storage-call.js'
import type { RefreshTokenStore } from '../stores.js'
import type { SqlDatabase } from './sql-database.js'

/** RefreshTokenStore in the `refresh_tokens` table: one row per user, rotated by a conditional UPDATE. */
export function createSqlRefreshTokenStore(database: SqlDatabase, call: StorageCall): RefreshTokenStore {
  const { statements } = database
  /** Whether the account exists; true when that cannot be told (the store fails), so the caller's error stands. */
  const accountExists = (userId: string) => {
    const { sql, parameters } = statements.findUserById(userId)
    return call('users.findById', () => database.run(sql, parameters)).then(
      ({ rows }) => rows.length > 0,
      () => true,
    )
  }
  const remove = async (userId: string) => {
    const { sql, parameters } = statements.deleteRefreshToken(userId)
    await call('refreshTokens.delete', (attempt) => database.write(sql, parameters, attempt))
  }
  return {
    async put(userId, token) {
      const { sql, parameters } = statements.putRefreshToken(userId, token)
      try {
        await call('refreshTokens.put', (attempt) => database.write(sql, parameters, attempt))
        return true
      } catch (error) {
        // the foreign key refuses the token of an account deleted since the caller read it (tessera users delete);
        // read back rather than parsed from each engine's error text, on this failure path only
        const refused = error instanceof StorageError && !error.outcomeUnknown
        if (refused && !(await accountExists(userId))) return false
        throw error
      }
    },
    async rotate(userId, currentDigest, next, now) {
      const { sql, parameters } = statements.rotateRefreshToken(userId, currentDigest, next, now)
      const { changes } = await call('refreshTokens.rotate', (attempt) =>
        database.write(sql, parameters, attempt),
      )
      return changes === 1
    },
    delete: remove,
    async currentExpiry(userId, now) {
      const { sql, parameters } = statements.refreshTokenExpiry(userId, now)
      const { rows } = await call('refreshTokens.currentExpiry', () => database.run(sql, parameters))
      const row = rows[0]
      // BIGINT arrives as a string from PostgreSQL
      return row === undefined ? null : Number(row.expires_at)
    },
    // the token goes now; the foreign key refuses any later one once the account's row is deleted, and deleting the
    // row deletes a token stored in between (ON DELETE CASCADE)
    retire: (userId) => remove(userId),
    async reinstate() {},
  }
}
