import type { StorageCall } from '../storage-call.js'
import type { CodeKey, EmailCodeStore } from '../stores.js'
import { decodeCodes, encodeCodes, newestThatFit, type StoredCode } from './mail-rows.js'
import type { SqlDatabase } from './sql-database.js'
import type { SqlQuery } from './sql-statements.js'

/** Rows one pruning statement deletes at most: each is a short write, however many have expired. */
const PRUNE_BATCH = 1_000

/** When the last of `codes` expires: the row's expires_at, by which it is pruned. */
const lastExpiry = (codes: readonly StoredCode[]) => Math.max(...codes.map((code) => code.expiresAt))

/**
 * EmailCodeStore in the `email_codes` table of any SQL engine (migrations 0005, 0007), with that engine's
 * statements. A key is one row, its codes in one column (encodeCodes), so that every change to a key is a change to
 * one row: a read, then a compare and swap (replaceEmailCodes, removeEmailCodes, or an insert that a unique violation
 * refuses) that changes the row only if it still holds what was read. Every engine checks that condition under the
 * row's lock against the row as the write before it left it (SQLite: its one writer), so whatever a write decided
 * from what it read holds at the moment it is made, and a write that lost its race reads again and decides afresh.
 * No transaction spans two statements, and none needs to: a try at several codes at once is one statement, where
 * a row per code would need them all locked together (which MySQL can do in no one statement).
 *
 * A lost race means another write to the key was made: tries counted (at most `maxTries` per code, CODES_PER_KEY
 * codes), the key used up, or a code sent (bounded by the send limits). So a call reads again a bounded number of
 * times, however many tries run at once.
 */
export function createSqlEmailCodeStore(database: SqlDatabase, call: StorageCall): EmailCodeStore {
  const { statements } = database
  const write = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, (attempt) => database.write(sql, parameters, attempt))).changes
  /** The key's codes as stored (the value a swap compares with), or null when it has none. */
  const read = async (operation: string, key: CodeKey): Promise<string | null> => {
    const { sql, parameters } = statements.findEmailCodes(key)
    const [row] = (await call(operation, () => database.run(sql, parameters))).rows
    return row === undefined ? null : String(row.codes)
  }
  /** A first code for the key: 0 when another write made its row first (the unique violation), not an error. */
  const insert = (key: CodeKey, codes: readonly StoredCode[]) =>
    call('codes.put', (attempt) => {
      const { sql, parameters } = statements.insertEmailCodes(key, encodeCodes(codes), lastExpiry(codes))
      return database.write(sql, parameters, attempt).then(
        (result) => result.changes,
        (error: unknown) => {
          if (database.isUniqueViolation(error)) return 0
          throw error
        },
      )
    })
  const replace = (operation: string, key: CodeKey, current: string, codes: readonly StoredCode[]) =>
    write(operation, statements.replaceEmailCodes(key, current, encodeCodes(codes), lastExpiry(codes)))

  return {
    async put(key, digest, expiresAt, now, resetKeyDigest = null) {
      const code: StoredCode =
        resetKeyDigest === null
          ? { digest, expiresAt, tries: 0 }
          : { digest, expiresAt, tries: 0, resetKeyDigest }
      for (;;) {
        const current = await read('codes.put', key)
        if (current === null) {
          if ((await insert(key, [code])) === 1) return
          continue
        }
        const kept = decodeCodes(current).filter((stored) => stored.expiresAt > now)
        const codes = newestThatFit([...kept, code])
        if ((await replace('codes.put', key, current, codes)) === 1) return
      }
    },

    async take(key, digest, now, maxTries) {
      const open = (code: StoredCode) => code.expiresAt > now && code.tries < maxTries
      for (;;) {
        const current = await read('codes.take', key)
        if (current === null) return false
        const codes = decodeCodes(current)
        if (!codes.some(open)) return false
        if (codes.some((code) => open(code) && code.digest === digest)) {
          // the right code: every code of the key is used up with it
          if ((await write('codes.take', statements.removeEmailCodes(key, current))) === 1) return true
          continue
        }
        // a wrong try counts on every open code, each of which it could have been; the expired ones go
        const counted = codes
          .filter((code) => code.expiresAt > now)
          .map((code) => (open(code) ? { ...code, tries: code.tries + 1 } : code))
        if ((await replace('codes.take', key, current, counted)) === 1) return false
      }
    },

    async takeResetKey(key, resetKeyDigest, now) {
      for (;;) {
        const current = await read('codes.takeResetKey', key)
        if (current === null) return false
        const right = decodeCodes(current).some(
          (code) => code.expiresAt > now && code.resetKeyDigest === resetKeyDigest,
        )
        // a wrong reset key writes nothing: it counts no try, on the codes or on the other reset keys
        if (!right) return false
        // the right one: every code of the key is used up with it, as with a right code
        if ((await write('codes.takeResetKey', statements.removeEmailCodes(key, current))) === 1) return true
      }
    },

    async deleteFor(userId, address) {
      await write('codes.deleteFor', statements.deleteEmailCodes(userId, address))
    },

    async prune(now) {
      let deleted = 0
      for (;;) {
        const changes = await write('codes.prune', statements.pruneEmailCodes(now, PRUNE_BATCH))
        deleted += changes
        if (changes < PRUNE_BATCH) return deleted
      }
    },
  }
}
