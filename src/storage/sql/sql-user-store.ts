import type { StorageCall } from '../storage-call.js'
import type { UserRecord, UserStore } from '../stores.js'
import type { SqlDialect } from './sql-dialect.js'

/** UserStore on any SQL dialect, through Kysely. */
export function createSqlUserStore(dialect: SqlDialect, call: StorageCall): UserStore {
  const { db } = dialect
  const columns = ['id', 'email', 'password_hash', 'created_at'] as const
  const toRecord = (row: {
    id: string
    email: string
    password_hash: string
    created_at: string
  }): UserRecord => ({
    id: row.id,
    email: row.email,
    passwordHash: row.password_hash,
    createdAt: row.created_at,
  })

  const findBy = async (column: 'id' | 'email', value: string) => {
    const row = await call(`users.findBy ${column}`, () =>
      db.selectFrom('users').select(columns).where(column, '=', value).executeTakeFirst(),
    )
    return row ? toRecord(row) : null
  }

  return {
    async create(user) {
      const inserted = await call('users.create', async () => {
        try {
          await db
            .insertInto('users')
            .values({
              id: user.id,
              email: user.email,
              password_hash: user.passwordHash,
              created_at: user.createdAt,
            })
            .execute()
          return true
        } catch (error) {
          if (dialect.isUniqueViolation(error)) return false
          throw error
        }
      })
      if (inserted) return 'created'
      // which constraint failed is read back rather than parsed from engine-specific error text
      return (await findBy('email', user.email)) ? 'email_taken' : 'id_taken'
    },
    findByEmail: (email) => findBy('email', email),
    findById: (id) => findBy('id', id),
    async updatePasswordHash(id, passwordHash) {
      await call('users.updatePasswordHash', () =>
        db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).execute(),
      )
    },
  }
}
