import { closeSync, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { OperationFailedError } from '../../errors.js'
import { loadBetterSqlite3 } from './better-sqlite3.js'

export interface BackupReport {
  file: string
  bytes: number
  accounts: number
}

/**
 * A consistent copy of the SQLite database `source` in `destination`, taken while the service runs, through SQLite's
 * online backup API (better-sqlite3's `backup()`). It copies every page in one step, under one read transaction, so
 * the copy is the database as of one instant: every write acknowledged before it began, none half-done. (In several
 * steps, a write by the service between two of them would restart the backup, again and again under load.) The copy
 * is written beside `destination` with mode 0600 (it holds the password hashes), checked (`PRAGMA quick_check`),
 * switched to a rollback journal so that it is one self-contained file, and only then renamed into place: a failed
 * backup leaves nothing behind.
 */
export async function backupSqlite(
  source: string,
  destination: string,
  options: { overwrite: boolean },
): Promise<BackupReport> {
  if (source === ':memory:')
    throw new OperationFailedError('an in-memory database cannot be backed up from another process')
  if (!existsSync(source)) throw new OperationFailedError(`no SQLite database at ${source}`)
  if (existsSync(destination) && !options.overwrite) {
    throw new OperationFailedError(`${destination} exists`, { refusal: 'destination_exists' })
  }
  if (!existsSync(dirname(destination)))
    throw new OperationFailedError(`the directory ${dirname(destination)} does not exist`)
  const partial = join(dirname(destination), `.${basename(destination)}.partial-${process.pid}`)
  const BetterSqlite3 = loadBetterSqlite3()
  try {
    closeSync(openSync(partial, 'wx', 0o600))
    const database = new BetterSqlite3(source, { fileMustExist: true })
    try {
      database.pragma('busy_timeout = 5000')
      // the first step only starts the backup; the progress callback then asks for every remaining page at once
      await database.backup(partial, { progress: () => 0x7fffffff })
    } finally {
      database.close()
    }
    const copy = new BetterSqlite3(partial, { fileMustExist: true })
    let accounts: number
    try {
      const check = copy.pragma('quick_check', { simple: true })
      if (check !== 'ok') throw new OperationFailedError(`the backup failed its check: ${String(check)}`)
      copy.pragma('journal_mode = DELETE')
      accounts = hasUsers(copy) ? Number(copy.prepare('SELECT COUNT(*) FROM users').pluck().get()) : 0
    } finally {
      copy.close()
    }
    renameSync(partial, destination)
    return { file: destination, bytes: statSync(destination).size, accounts }
  } catch (error) {
    for (const file of [partial, `${partial}-journal`, `${partial}-wal`, `${partial}-shm`])
      rmSync(file, { force: true })
    if (error instanceof OperationFailedError) throw error
    throw new OperationFailedError(
      `the backup failed: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}

function hasUsers(database: { prepare(sql: string): { get(): unknown } }): boolean {
  return (
    database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'users'").get() !==
    undefined
  )
}
