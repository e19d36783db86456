// Seeding accounts directly through the store (the fast path: no HTTP, one precomputed Argon2 hash shared by all),
// with the project's own storage modules from dist/. Users are generated deterministically but valid: a 10-digit id
// whose first digit is not 0, a unique e-mail, ISO 8601 created_at.
import { createHash } from 'node:crypto'
import { hash } from '@node-rs/argon2'
import { argon2Options, BENCH_PASSWORD } from './argon2-options.mjs'

/**
 * Rows per INSERT: 4 parameters each for an account, 11 for a session, under SQLite's 32,766 and PostgreSQL's 65,535
 * bound parameters.
 */
const ROWS_PER_INSERT = 2_000
/** INSERTs per transaction. */
const INSERTS_PER_TRANSACTION = 25
const ID_SPACE = 9_000_000_000
/** Coprime with 9·10⁹ (not divisible by 2, 3 or 5), so i ↦ i·K mod 9·10⁹ is a bijection: ids never collide. */
const ID_MULTIPLIER = 2_654_435_761
const CREATED_AT = '2026-01-01T00:00:00.000Z'

/**
 * The i-th seeded account's id and e-mail.
 * @param {number} index
 */
export function seededUser(index) {
  return {
    id: String(1_000_000_000 + ((index * ID_MULTIPLIER) % ID_SPACE)),
    email: `user-${index}@seed.example`,
  }
}

/**
 * The hash every seeded account has: BENCH_PASSWORD with the service's parameters (so a login does not re-hash it).
 * @param {import('./argon2-options.mjs').Argon2Cost} argon2
 */
export function seedPasswordHash(argon2) {
  return hash(BENCH_PASSWORD, argon2Options(argon2))
}

/**
 * Inserts accounts 0 … count-1 into `users` and, when asked, a session for each, as a login in the default mode
 * stores it (slot 'single', migration 0004; the digest of a string that is no token, so none matches it: the table
 * has the size it would have with every account logged in), in large batches inside transactions.
 * @param {Pick<import('../src/storage/sql/sql-database.js').SqlDatabase, 'db'>} database a database opened by
 *   dist/storage/<engine>/
 * @param {{ count: number, passwordHash: string, sessions: boolean,
 *   onProgress?: (done: number) => void }} options
 */
export async function seedUsers(database, options) {
  const { db } = database
  const now = Date.now()
  const expiresAt = now + 30 * 86_400_000
  const batchesPerTransaction = ROWS_PER_INSERT * INSERTS_PER_TRANSACTION
  for (let start = 0; start < options.count; start += batchesPerTransaction) {
    const end = Math.min(options.count, start + batchesPerTransaction)
    await db.transaction().execute(async (trx) => {
      for (let from = start; from < end; from += ROWS_PER_INSERT) {
        const to = Math.min(end, from + ROWS_PER_INSERT)
        const users = []
        const sessions = []
        for (let index = from; index < to; index++) {
          const { id, email } = seededUser(index)
          users.push({
            id,
            email,
            password_hash: options.passwordHash,
            created_at: CREATED_AT,
            updated_at: CREATED_AT,
          })
          if (options.sessions) {
            const digest = createHash('sha256').update(`seed-${index}`).digest('hex')
            sessions.push({
              id: digest.slice(0, 32),
              user_id: id,
              slot: 'single',
              token_digest: digest,
              expires_at: expiresAt,
              created_at: now,
              last_used_at: now,
              device: '',
            })
          }
        }
        await trx.insertInto('users').values(users).execute()
        if (sessions.length > 0) await trx.insertInto('sessions').values(sessions).execute()
      }
    })
    options.onProgress?.(end)
  }
}
