import type { StorageCall } from '../storage-call.js'
import type { RefreshTokenStore } from '../stores.js'
import type { SqlDatabase } from './sql-database.js'

/** RefreshTokenStore in the `refresh_tokens` table: one row per user, rotated by a conditional UPDATE. */
export function createSqlRefreshTokenStore(database: SqlDatabase, call: StorageCall): RefreshTokenStore {
  const { statements } = database
  return {
    async put(userId, token) {
      const { sql, parameters } = statements.putRefreshToken(userId, token)
      await call('refreshTokens.put', (attempt) => database.write(sql, parameters, attempt))
    },
    async rotate(userId, currentDigest, next, now) {
      const { sql, parameters } = statements.rotateRefreshToken(userId, currentDigest, next, now)
      const { changes } = await call('refreshTokens.rotate', (attempt) =>
        database.write(sql, parameters, attempt),
      )
      return changes === 1
    },
    async delete(userId) {
      const { sql, parameters } = statements.deleteRefreshToken(userId)
      await call('refreshTokens.delete', (attempt) => database.write(sql, parameters, attempt))
    },
  }
}
