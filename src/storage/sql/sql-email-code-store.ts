import type { StorageCall } from '../storage-call.js'
import type { EmailCodeStore } from '../stores.js'
import type { SqlDatabase } from './sql-database.js'
import type { SqlQuery } from './sql-statements.js'

/** EmailCodeStore in the `email_codes` table of any SQL engine (migration 0005), with that engine's statements. */
export function createSqlEmailCodeStore(database: SqlDatabase, call: StorageCall): EmailCodeStore {
  const { statements } = database
  const write = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, (attempt) => database.write(sql, parameters, attempt))).changes

  return {
    async put(key, digest, expiresAt) {
      await write('codes.put', statements.putEmailCode(key, digest, expiresAt))
    },
    // Two writes. The first counts the try, under the row's lock, only while the code has tries left: of any number
    // of concurrent takes, at most maxTries get past it, wrong ones included. The second deletes the code only if
    // the digest is its own: of the takes past the first, the row lock again lets one delete it and the others find
    // nothing. A code put between the two (a new one for the key) is the one the second compares with; its own tries
    // start at 0, so that take's try counted on the code it replaced.
    async take(key, digest, now, maxTries) {
      if ((await write('codes.take', statements.countEmailCodeTry(key, now, maxTries))) === 0) return false
      return (await write('codes.take', statements.useEmailCode(key, digest, now))) === 1
    },
    async deleteFor(userId, address) {
      await write('codes.deleteFor', statements.deleteEmailCodes(userId, address))
    },
    prune: (now) => write('codes.prune', statements.pruneEmailCodes(now)),
  }
}
