import { join } from 'node:path'
import { expect } from 'vitest'
import type { CopyReport } from '../../../src/storage/copy/copy-store.js'
import { loadBetterSqlite3 } from '../../../src/storage/sqlite/better-sqlite3.js'
import { type Backend, backends } from '../../support/backends.js'
import { runCli } from '../../support/process.js'
import { useTempDir } from '../../support/temp-dir.js'
import { seedSqliteStore } from './seed-accounts.js'

/** A connection of better-sqlite3, open on one SQLite file. */
export type SqliteConnection = InstanceType<ReturnType<typeof loadBetterSqlite3>>

/**
 * Fewer rows than the copy tests' tables hold: every table is copied over several batches (avatars 4 at a time at
 * most).
 */
const BATCH_SIZE = '7'

const postgres = backends.find((candidate) => candidate.name === 'postgres')
const mysql = backends.find((candidate) => candidate.name === 'mysql')

/** Whether PostgreSQL or MariaDB is not configured for this run: the copies through both are then skipped. */
export const serversMissing = postgres === undefined || mysql === undefined

/**
 * `tessera store copy --force` from `from` to `to`, as a person runs it (no --json): a failed verification is the
 * one line on stderr that the tests read.
 */
export function copyForced(from: string, to: string) {
  return runCli(['store', 'copy', '--force', '--from', from, '--to', to])
}

/**
 * The SQLite files of a copy test's own directory (`prefix` names it) and `tessera store copy --json` between them,
 * in small batches: the tests of each part of a store copy it, and check the copy, the same way.
 */
export function useCopyFiles(prefix: string) {
  const dir = useTempDir(prefix)
  const url = (name: string) => `sqlite:${join(dir.path, name)}`

  /** Copies with `args`; `report` is the JSON report, as the command wrote it, when it succeeded. */
  async function copy(args: string[]) {
    const result = await runCli(['store', 'copy', '--json', '--batch-size', BATCH_SIZE, ...args])
    return { ...result, report: result.code === 0 ? JSON.parse(result.stdout) : null }
  }
  type Report = Awaited<ReturnType<typeof copy>>['report']

  /** Runs `use` on the SQLite file `name` of the test directory, opened for writing. */
  function onSqlite<T>(name: string, use: (connection: SqliteConnection) => T): T {
    const BetterSqlite3 = loadBetterSqlite3()
    const connection = new BetterSqlite3(join(dir.path, name))
    try {
      return use(connection)
    } finally {
      connection.close()
    }
  }

  /**
   * Copies the SQLite file `from` into the new file `to` and checks the report: verified, the accounts the same on
   * both sides, and all `rows` rows of `part` (the report's name of a table under test) copied, the source's digest
   * a SHA-256 and the target's count and digest the source's. Resolves with the report, for the test's own checks.
   */
  async function copyIntoNew(
    from: string,
    to: string,
    part: keyof CopyReport,
    rows: number,
  ): Promise<Report> {
    const { code, stderr, report } = await copy(['--from', url(from), '--to', url(to)])
    expect(code, stderr).toBe(0)
    expect(report.mismatch).toBeNull()
    expect(report.accounts.target).toEqual(report.accounts.source)
    expect(report[part]).toEqual({
      copied: rows,
      source: { count: rows, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      target: report[part].source,
    })
    return report
  }

  /** Copies the SQLite file `from` into `to` once more, with --force: it must succeed. Resolves with its result. */
  async function copyAgain(from: string, to: string) {
    const again = await copy(['--force', '--from', url(from), '--to', url(to)])
    expect(again.code, again.stderr).toBe(0)
    return again
  }

  /**
   * Seeds 20 accounts in the SQLite file `earlier`, turns it into a store of an earlier version with `undo`, and
   * copies it into `later`: every account must come across, verified, and the report's `absentParts` (those of the
   * tables the earlier version has not) must be null.
   */
  async function copyEarlier(
    earlier: string,
    later: string,
    undo: (connection: SqliteConnection) => void,
    absentParts: readonly (keyof CopyReport)[],
  ): Promise<void> {
    await seedSqliteStore(join(dir.path, earlier), 20, 10)
    onSqlite(earlier, undo)
    const { code, stderr, report } = await copy(['--from', url(earlier), '--to', url(later)])
    expect(code, stderr).toBe(0)
    expect(report.mismatch).toBeNull()
    expect(report.accounts).toMatchObject({ copied: 20 })
    expect(report.accounts.target).toEqual(report.accounts.source)
    for (const part of absentParts) expect(report[part]).toBeNull()
  }

  /**
   * Checks that the store of an earlier version in the SQLite file `earlier` was only read by the copy: still at
   * migration `version`, its users still without the column `missingColumn`.
   */
  function expectEarlierKept(earlier: string, version: number, missingColumn: string) {
    onSqlite(earlier, (connection) => {
      expect(connection.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBe(version)
      const columns = connection.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('users')
      expect(columns).not.toContain(missingColumn)
    })
  }

  /**
   * Copies the SQLite file `from` into a fresh PostgreSQL database, that into a fresh MariaDB one, and that back
   * into the SQLite file `back`, each hop verified and its report checked with `checkHop`; the databases are
   * removed after. Only where the servers are configured (serversMissing).
   */
  async function copyThroughServers(from: string, back: string, checkHop: (report: Report) => void) {
    const onPostgres = await (postgres as Backend).setup()
    const onMysql = await (mysql as Backend).setup()
    try {
      const hops = [
        [url(from), onPostgres.env.DATABASE_URL as string],
        [onPostgres.env.DATABASE_URL as string, onMysql.env.DATABASE_URL as string],
        [onMysql.env.DATABASE_URL as string, url(back)],
      ]
      for (const [source, target] of hops) {
        const { code, stderr, report } = await copy(['--from', source as string, '--to', target as string])
        expect(code, `${source} to ${target}: ${stderr}`).toBe(0)
        expect(report.mismatch).toBeNull()
        checkHop(report)
      }
    } finally {
      await onPostgres.teardown()
      await onMysql.teardown()
    }
  }

  return {
    dir,
    url,
    onSqlite,
    copyIntoNew,
    copyAgain,
    copyEarlier,
    expectEarlierKept,
    copyThroughServers,
  }
}
