import type { StorageCall } from '../storage-call.js'
import type { RefreshTokenStore } from '../stores.js'
import { param, prepareQuery } from './prepared-query.js'
import type { SqlDialect } from './sql-dialect.js'

/** RefreshTokenStore in the `refresh_tokens` table: one row per user, rotated by a conditional UPDATE. */
export function createSqlRefreshTokenStore(dialect: SqlDialect, call: StorageCall): RefreshTokenStore {
  const { db } = dialect
  const replacement = { token_digest: param<string>('digest'), expires_at: param<number>('expiresAt') }
  const insert = db.insertInto('refresh_tokens').values({ user_id: param<string>('userId'), ...replacement })
  const queries = {
    put: prepareQuery<'userId' | 'digest' | 'expiresAt'>(
      dialect.upsertSyntax === 'on-conflict'
        ? insert.onConflict((conflict) => conflict.column('user_id').doUpdateSet(replacement))
        : insert.onDuplicateKeyUpdate(replacement),
    ),
    // One UPDATE whose WHERE is the compare: the engine's row lock serializes concurrent rotations, and the loser
    // re-reads the new digest, matches nothing and changes 0 rows.
    rotate: prepareQuery<'userId' | 'current' | 'now' | 'digest' | 'expiresAt'>(
      db
        .updateTable('refresh_tokens')
        .set(replacement)
        .where('user_id', '=', param<string>('userId'))
        .where('token_digest', '=', param<string>('current'))
        .where('expires_at', '>', param<number>('now')),
    ),
    delete: prepareQuery<'userId'>(
      db.deleteFrom('refresh_tokens').where('user_id', '=', param<string>('userId')),
    ),
  }

  return {
    async put(userId, token) {
      const { sql, bind } = queries.put
      await call('refreshTokens.put', () =>
        dialect.write(sql, bind({ userId, digest: token.digest, expiresAt: token.expiresAt })),
      )
    },
    async rotate(userId, current, next, now) {
      const { sql, bind } = queries.rotate
      const { changes } = await call('refreshTokens.rotate', () =>
        dialect.write(sql, bind({ userId, current, now, digest: next.digest, expiresAt: next.expiresAt })),
      )
      return changes === 1
    },
    async delete(userId) {
      const { sql, bind } = queries.delete
      await call('refreshTokens.delete', () => dialect.write(sql, bind({ userId })))
    },
  }
}
