import type { StorageCall } from '../storage-call.js'
import type { UserRecord, UserStore } from '../stores.js'
import { param, prepareQuery } from './prepared-query.js'
import type { SqlDialect } from './sql-dialect.js'

interface UserRow {
  id: string
  email: string
  password_hash: string
  created_at: string
}

/** UserStore on any SQL dialect: queries built by Kysely once, run by the dialect. */
export function createSqlUserStore(dialect: SqlDialect, call: StorageCall): UserStore {
  const { db } = dialect
  const columns = ['id', 'email', 'password_hash', 'created_at'] as const
  const queries = {
    findById: prepareQuery<'value'>(
      db.selectFrom('users').select(columns).where('id', '=', param<string>('value')),
    ),
    findByEmail: prepareQuery<'value'>(
      db.selectFrom('users').select(columns).where('email', '=', param<string>('value')),
    ),
    insert: prepareQuery<keyof UserRow>(
      db.insertInto('users').values({
        id: param<string>('id'),
        email: param<string>('email'),
        password_hash: param<string>('password_hash'),
        created_at: param<string>('created_at'),
      }),
    ),
    updatePasswordHash: prepareQuery<'id' | 'hash'>(
      db
        .updateTable('users')
        .set({ password_hash: param<string>('hash') })
        .where('id', '=', param<string>('id')),
    ),
  }

  const findBy = async (query: 'findById' | 'findByEmail', value: string): Promise<UserRecord | null> => {
    const { rows } = await call(`users.${query}`, () =>
      dialect.run(queries[query].sql, queries[query].bind({ value })),
    )
    const row = rows[0] as UserRow | undefined
    return row
      ? { id: row.id, email: row.email, passwordHash: row.password_hash, createdAt: row.created_at }
      : null
  }

  return {
    async create(user) {
      const row: UserRow = {
        id: user.id,
        email: user.email,
        password_hash: user.passwordHash,
        created_at: user.createdAt,
      }
      const inserted = await call('users.create', () =>
        dialect.write(queries.insert.sql, queries.insert.bind(row)).then(
          () => true,
          (error: unknown) => {
            if (dialect.isUniqueViolation(error)) return false
            throw error
          },
        ),
      )
      if (inserted) return 'created'
      // which constraint failed is read back rather than parsed from engine-specific error text
      return (await findBy('findByEmail', user.email)) ? 'email_taken' : 'id_taken'
    },
    findByEmail: (email) => findBy('findByEmail', email),
    findById: (id) => findBy('findById', id),
    async updatePasswordHash(id, hash) {
      const { sql, bind } = queries.updatePasswordHash
      await call('users.updatePasswordHash', () => dialect.write(sql, bind({ id, hash })))
    },
  }
}
