import type { StorageCall } from '../storage-call.js'
import type { AvatarStore } from '../stores.js'
import { toAvatarImage } from './avatar-rows.js'
import { refusedForMissingAccount } from './missing-account.js'
import type { SqlDatabase } from './sql-database.js'
import type { SqlQuery } from './sql-statements.js'

/**
 * AvatarStore in the `avatars` table of any SQL engine (migration 0006), with that engine's statements: one row per
 * account, keyed by its user id, whose id changes with each upload. An upload is one upsert on the user id, so the
 * previous avatar is gone in the statement that stores the new one, and of concurrent uploads one remains.
 */
export function createSqlAvatarStore(database: SqlDatabase, call: StorageCall): AvatarStore {
  const { statements } = database
  const write = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, (attempt) => database.write(sql, parameters, attempt))).changes

  return {
    async put(avatar) {
      try {
        await write('avatars.put', statements.putAvatar(avatar))
        return true
      } catch (error) {
        // the foreign key refuses the avatar of an account deleted since the caller read it
        if (await refusedForMissingAccount(database, call, error, avatar.userId)) return false
        throw error
      }
    },
    async get(id) {
      const { sql, parameters } = statements.findAvatar(id)
      const [row] = (await call('avatars.get', () => database.run(sql, parameters))).rows
      return row === undefined ? null : toAvatarImage(row)
    },
    async delete(userId) {
      return (await write('avatars.delete', statements.deleteAvatar(userId))) === 1
    },
  }
}
