import { Kysely, SqliteDialect } from 'kysely'
import { describe, expect, it } from 'vitest'
import { param, prepareQuery } from '../../../src/storage/sql/prepared-query.js'
import type { Database } from '../../../src/storage/sql/schema.js'
import { loadBetterSqlite3 } from '../../../src/storage/sqlite/better-sqlite3.js'

const BetterSqlite3 = loadBetterSqlite3()

const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) })

describe('prepareQuery', () => {
  it('compiles once and binds values by name, in the order of the SQL', () => {
    const query = prepareQuery<'userId' | 'current' | 'next'>(
      db
        .updateTable('refresh_tokens')
        .set({ token_digest: param<string>('next') })
        .where('user_id', '=', param<string>('userId'))
        .where('token_digest', '=', param<string>('current')),
    )
    expect(query.sql).toBe(
      'update "refresh_tokens" set "token_digest" = ? where "user_id" = ? and "token_digest" = ?',
    )
    expect(query.bind({ userId: 'u', current: 'old', next: 'new' })).toEqual(['new', 'u', 'old'])
  })

  it('refuses a literal value, which would be frozen into every call', () => {
    expect(() => prepareQuery(db.selectFrom('users').selectAll().where('id', '=', '1234567890'))).toThrow(
      /is a literal; use param\(\)/,
    )
  })
})
