import { StorageError } from '../../errors.js'
import type { StorageCall } from '../storage-call.js'
import type { SqlDatabase } from './sql-database.js'

/**
 * Whether a write that failed with `error` was refused because the account `userId` is gone: the foreign key of a
 * row that names it (a session, an avatar, a provider link) refuses the row of an account deleted since the caller
 * read it (tessera users delete). Read back rather than parsed from each engine's error text, on the failure path
 * only: true when the write was refused (its outcome is known) and the account is not there. False when the account
 * is there, or when that cannot be told (the read fails too), so that the caller's error stands.
 */
export async function refusedForMissingAccount(
  database: SqlDatabase,
  call: StorageCall,
  error: unknown,
  userId: string,
): Promise<boolean> {
  if (!(error instanceof StorageError) || error.outcomeUnknown) return false
  const { sql, parameters } = database.statements.findUsersByIds([userId])
  return call('users.findById', () => database.run(sql, parameters)).then(
    ({ rows }) => rows.length === 0,
    () => false,
  )
}
