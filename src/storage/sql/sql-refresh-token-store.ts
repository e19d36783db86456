import type { StorageCall } from '../storage-call.js'
import type { RefreshTokenStore } from '../stores.js'
import type { SqlDialect } from './sql-dialect.js'

/** RefreshTokenStore in the `refresh_tokens` table: one row per user, rotated by a conditional UPDATE. */
export function createSqlRefreshTokenStore(dialect: SqlDialect, call: StorageCall): RefreshTokenStore {
  const { db } = dialect
  return {
    async put(userId, token) {
      const row = { user_id: userId, token_digest: token.digest, expires_at: token.expiresAt }
      const replace = { token_digest: token.digest, expires_at: token.expiresAt }
      await call('refreshTokens.put', () => {
        const insert = db.insertInto('refresh_tokens').values(row)
        return dialect.upsertSyntax === 'on-conflict'
          ? insert.onConflict((conflict) => conflict.column('user_id').doUpdateSet(replace)).execute()
          : insert.onDuplicateKeyUpdate(replace).execute()
      })
    },

    async rotate(userId, currentDigest, next, now) {
      // One UPDATE whose WHERE is the compare: the engine's row lock serializes concurrent rotations and the loser
      // re-reads the new digest, matches nothing and reports 0 rows.
      const result = await call('refreshTokens.rotate', () =>
        db
          .updateTable('refresh_tokens')
          .set({ token_digest: next.digest, expires_at: next.expiresAt })
          .where('user_id', '=', userId)
          .where('token_digest', '=', currentDigest)
          .where('expires_at', '>', now)
          .executeTakeFirst(),
      )
      return result.numUpdatedRows === 1n
    },

    async delete(userId) {
      await call('refreshTokens.delete', () =>
        db.deleteFrom('refresh_tokens').where('user_id', '=', userId).execute(),
      )
    },
  }
}
