import type { StorageCall } from '../storage-call.js'
import type { UserRecord, UserStore } from '../stores.js'
import type { SqlDatabase } from './sql-database.js'

interface UserRow {
  id: string
  email: string
  password_hash: string
  created_at: string
}

/** UserStore in the `users` table of any SQL engine, with that engine's statements. */
export function createSqlUserStore(database: SqlDatabase, call: StorageCall): UserStore {
  const { statements } = database

  const findOne = async (operation: string, sql: string, parameters: readonly unknown[]) => {
    const { rows } = await call(operation, () => database.run(sql, parameters))
    const row = rows[0] as UserRow | undefined
    return row ? toUser(row) : null
  }
  const findByEmail = (email: string) => {
    const { sql, parameters } = statements.findUserByEmail(email)
    return findOne('users.findByEmail', sql, parameters)
  }

  return {
    async create(user) {
      const { sql, parameters } = statements.insertUser(user)
      const inserted = await call('users.create', (attempt) =>
        database.write(sql, parameters, attempt).then(
          () => true,
          (error: unknown) => {
            if (database.isUniqueViolation(error)) return false
            throw error
          },
        ),
      )
      if (inserted) return 'created'
      // which constraint failed is read back rather than parsed from engine-specific error text
      return (await findByEmail(user.email)) ? 'email_taken' : 'id_taken'
    },
    findByEmail,
    findById(id) {
      const { sql, parameters } = statements.findUserById(id)
      return findOne('users.findById', sql, parameters)
    },
    async updatePasswordHash(id, passwordHash) {
      const { sql, parameters } = statements.updatePasswordHash(id, passwordHash)
      await call('users.updatePasswordHash', (attempt) => database.write(sql, parameters, attempt))
    },
    async list({ after = '', limit }) {
      const { sql, parameters } = statements.listUsers(after, limit)
      const { rows } = await call('users.list', () => database.run(sql, parameters))
      return (rows as unknown as UserRow[]).map(toUser)
    },
    async delete(id) {
      const { sql, parameters } = statements.deleteUser(id)
      const { changes } = await call('users.delete', (attempt) => database.write(sql, parameters, attempt))
      return changes === 1
    },
  }
}

function toUser(row: UserRow): UserRecord {
  return { id: row.id, email: row.email, passwordHash: row.password_hash, createdAt: row.created_at }
}
