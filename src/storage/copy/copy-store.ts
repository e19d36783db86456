import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import { ConfigError } from '../../config/config-error.js'
import { createEnvReader } from '../../config/env-reader.js'
import { readStorageConfig, type StorageConfig } from '../../config/storage-config.js'
import { OperationFailedError } from '../../errors.js'
import { describeError, openDatabase, sqlitePath } from '../open-stores.js'
import { migrate } from '../sql/migrate.js'
import { runPooled, type SqlDatabase } from '../sql/sql-database.js'
import type { SqlQuery } from '../sql/sql-statements.js'
import type { Tables } from '../sql/tables.js'
import { type Checksum, runningChecksum } from './checksum.js'
import { copyAccountParts } from './copy-account-parts.js'
import { type AuditCopy, auditColumnsOf, copyAuditEvents } from './copy-audit-events.js'
import type { RowsCopy } from './copy-keyed-table.js'
import { copyMail } from './copy-mail.js'
import { copySecondFactors } from './copy-second-factors.js'
import {
  ACCOUNTS_PER_INSERT,
  type AccountRow,
  accountColumnsOf,
  type CopyStatements,
  copyStatements,
  legacyTokenToSessionRow,
  type Read,
  SESSIONS_PER_INSERT,
  type SessionRow,
  sessionColumnsOf,
  toAccountRow,
  toSessionRow,
} from './copy-statements.js'
import type { RedisSessions } from './redis-sessions.js'

export interface CopyOptions {
  /** DATABASE_URL of the store to copy from; only read. */
  from: string
  /** DATABASE_URL of the store to copy into; migrated first. */
  to: string
  /** Read the sessions from this Redis instead of the source's SQL table. */
  redisFrom: string | null
  /** Write the sessions into this Redis instead of the target's SQL table. */
  redisTo: string | null
  /** REDIS_KEY_PREFIX, on both Redis sides. */
  redisKeyPrefix: string
  batchSize: number
  /** Continue after the target's last account (an interrupted copy). */
  resume: boolean
  /** Copy into a target that holds accounts already, leaving those as they are. */
  force: boolean
  /**
   * The service clock: its time when the copy begins is the instant at or before which an expiring session is not
   * copied, and not compared (and when a refresh token of an earlier version, read as a session, started); the
   * target's migrations are recorded by it.
   */
  clock: Clock
  /** How messages name each side (the command's options); "the source" and so on by default. */
  names?: Partial<Record<CopySide, string>>
}

/** The stores a copy touches. */
export type CopySide = 'source' | 'target' | 'redisSource' | 'redisTarget'

const SIDE_NAMES: Record<CopySide, string> = {
  source: 'the source',
  target: 'the target',
  redisSource: "the source's Redis",
  redisTarget: "the target's Redis",
}

/** What the copy tells about its progress, one phase at a time. */
export interface CopyProgress {
  /** A phase begins: `total` accounts to go through. */
  start(phase: string, total: number): void
  /** `done` accounts of the phase gone through, after each batch. */
  update(done: number): void
  /** The phase has ended (or the copy failed); a second call does nothing. */
  stop(): void
}

export interface CopyReport {
  source: string
  target: string
  /** Where the sessions were read from and written to: the SQL stores, or the Redis of either side. */
  sessionsFrom: string
  sessionsTo: string
  /** The last account the target held when a resumed copy began, or null. */
  resumedAfter: string | null
  accounts: { copied: number; alreadyThere: number; source: Checksum; target: Checksum; targetTotal: number }
  /** Unexpired sessions, every field of each. */
  sessions: { copied: number; source: Checksum; target: Checksum }
  /** The audit trail, when the source has one (null when it has not). */
  auditEvents: AuditCopy | null
  /** The unexpired e-mail codes, when the source has them (migration 0005; null when it has not). */
  emailCodes: RowsCopy | null
  /** The mail and events waiting in the outbox, when the source has one (migration 0005; null when it has not). */
  outbox: RowsCopy | null
  /** The webhook URLs disabled by a 410, when the source has them (migration 0012; null when it has not). */
  disabledWebhookUrls: RowsCopy | null
  /** The avatars, when the source has them (migration 0006; null when it has not). */
  avatars: RowsCopy | null
  /** The provider links, when the source has them (migration 0006; null when it has not). */
  providerLinks: RowsCopy | null
  /** The second factors, pending ones too, when the source has them (migration 0009; null when it has not). */
  factors: RowsCopy | null
  /** The unused recovery codes, when the source has them (migration 0009; null when it has not). */
  recoveryCodes: RowsCopy | null
  /** The service's sealed keys, when the source has them (migration 0009; null when it has not). */
  serviceKeys: RowsCopy | null
  /** Why the target does not hold what the source does, or null when it does. */
  mismatch: string | null
}

/**
 * Copies the accounts and their unexpired sessions from one store to another, in batches of `batchSize` accounts in
 * id order, each written in one transaction (its sessions first when they go to Redis, so that a copy interrupted
 * between the two has written them and a resumed one writes them again); then the audit trail, the unexpired e-mail
 * codes, the outbox (mail and webhook events) and the disabled webhook URLs, the avatars and the provider links (not the one-time tickets: copy-account-parts.ts), the
 * second factors, the recovery codes and the service keys (copy-second-factors.ts). The source is read in one
 * snapshot (a read transaction), so the copy is consistent as of its start. A source of a version before sessions (a
 * SQL store before migration 0004, Redis keys of one refresh token per user) is read as sessions, as the service
 * would read it; one before migration 0005 as unverified accounts, without codes or outbox; one before 0006 as
 * accounts without profile, avatar or provider; one before 0008 as an outbox none of whose messages is known to be a
 * code; one before 0009 as accounts without second factors; one before 0010 as sessions none of which was
 * established with a second factor. Then every account and session of the source is read again, from the same snapshot, and compared
 * with the target's: counts and SHA-256 digests (the other tables' rows are compared batch by batch as they are
 * copied).
 */
export async function copyStore(options: CopyOptions, progress: CopyProgress): Promise<CopyReport> {
  const names = { ...SIDE_NAMES, ...options.names }
  const now = options.clock.now()
  if (sameStore(options.from, options.to) && (options.redisFrom ?? '') === (options.redisTo ?? '')) {
    throw new OperationFailedError(`${names.source} and ${names.target} name the same store`)
  }
  const opened: Array<{ close(): Promise<void> }> = []
  try {
    const source = await openSql(options.from, 'source', names.source)
    opened.push(source)
    const sourceSchema = await source.db.introspection.getTables()
    const sourceTables = sourceSchema.map((table) => table.name)
    if (!sourceTables.includes('users'))
      throw new OperationFailedError(`${names.source} holds no Tessera store (no users table)`)
    const target = await openSql(options.to, 'target', names.target)
    opened.push(target)
    const redisFrom = options.redisFrom
      ? await openRedis(options.redisFrom, names.redisSource, options)
      : null
    if (redisFrom) opened.push(redisFrom)
    const redisTo = options.redisTo ? await openRedis(options.redisTo, names.redisTarget, options) : null
    if (redisTo) opened.push(redisTo)

    const targetHolds = await holdsAccounts(target, redisTo)
    if (targetHolds !== null && !options.resume && !options.force) {
      throw new OperationFailedError(`the target already holds ${targetHolds}`, {
        refusal: 'target_not_empty',
      })
    }
    await migrate(target, options.clock)
    const to = copyStatements(target.engine)
    const write = async (db: Kysely<Tables>, query: SqlQuery) =>
      (await runPooled(db, query.sql, query.parameters)).changes
    const readTarget = readOn(target.db)
    const resumedAfter = options.resume
      ? (((await readTarget(to.lastAccountId))[0]?.id as string | null | undefined) ?? null)
      : null

    return await withSnapshot(source, async (readSource) => {
      const from = copyStatements(
        source.engine,
        accountColumnsOf(sourceSchema),
        sessionColumnsOf(sourceSchema),
      )
      // a batch is every source account from its first id to its last, so a range read is exactly its rows on the
      // source; on the target, which may hold other accounts (--force), only the batch's ids are kept
      const sourceSessions = async (ids: readonly string[]): Promise<SessionRow[]> => {
        if (redisFrom) return redisFrom.read(ids, now)
        if (!sourceTables.includes('sessions')) {
          const rows = await readSource(from.legacyTokensBetween(first(ids), last(ids), now))
          return rows.flatMap((row) => legacyTokenToSessionRow(row, now) ?? [])
        }
        return (await readSource(from.sessionsBetween(first(ids), last(ids), now))).map(toSessionRow)
      }
      const targetSessions = async (ids: readonly string[]): Promise<SessionRow[]> => {
        if (redisTo) return redisTo.read(ids, now)
        const rows = await readTarget(to.sessionsBetween(first(ids), last(ids), now))
        const batch = new Set(ids)
        return rows.map(toSessionRow).filter((row) => batch.has(row.userId))
      }
      const targetAccounts = async (ids: readonly string[]) => {
        const rows = await readTarget(to.accountsBetween(first(ids), last(ids)))
        const batch = new Set(ids)
        return rows.map(toAccountRow).filter((row) => batch.has(row.id))
      }
      const count = async (read: Read, statements: CopyStatements, after: string) =>
        Number((await read(statements.countAccountsAfter(after)))[0]?.n ?? 0)

      // the copy, from where the target stops
      const startAfter = resumedAfter ?? ''
      let copied = 0
      let sessionsCopied = 0
      let done = 0
      progress.start('copying', await count(readSource, from, startAfter))
      await forEachBatch(readSource, from, startAfter, options.batchSize, async (accounts) => {
        const ids = accounts.map((account) => account.id)
        const sessions = await sourceSessions(ids)
        if (redisTo) await redisTo.write(sessions)
        const written = await target.db.transaction().execute(async (transaction) => {
          let accountsWritten = 0
          for (let start = 0; start < accounts.length; start += ACCOUNTS_PER_INSERT) {
            const chunk = accounts.slice(start, start + ACCOUNTS_PER_INSERT)
            accountsWritten += await write(transaction, to.insertAccounts(chunk))
          }
          if (redisTo) return { accounts: accountsWritten, sessions: sessions.length }
          let sessionsWritten = 0
          for (let start = 0; start < sessions.length; start += SESSIONS_PER_INSERT) {
            const chunk = sessions.slice(start, start + SESSIONS_PER_INSERT)
            sessionsWritten += await write(transaction, to.insertSessions(chunk))
          }
          return { accounts: accountsWritten, sessions: sessionsWritten }
        })
        copied += written.accounts
        sessionsCopied += written.sessions
        done += accounts.length
        progress.update(done)
      })
      progress.stop()

      const auditEvents = sourceTables.includes('audit_events')
        ? await copyAuditEvents(
            readSource,
            readTarget,
            { engine: source.engine, columns: auditColumnsOf(sourceSchema) },
            target,
            options,
          )
        : null
      const mail = await copyMail(
        readSource,
        readTarget,
        { engine: source.engine, tables: sourceTables, schema: sourceSchema },
        target,
        { batchSize: options.batchSize, now },
      )
      const accountParts = await copyAccountParts(
        readSource,
        readTarget,
        { engine: source.engine, tables: sourceTables },
        target,
        { batchSize: options.batchSize },
      )
      const secondFactors = await copySecondFactors(
        readSource,
        readTarget,
        { engine: source.engine, tables: sourceTables },
        target,
        { batchSize: options.batchSize },
      )

      // the verification, over every account of the source
      const sums = {
        sourceAccounts: runningChecksum(),
        targetAccounts: runningChecksum(),
        sourceSessions: runningChecksum(),
        targetSessions: runningChecksum(),
      }
      const sourceTotal = await count(readSource, from, '')
      let verified = 0
      progress.start('verifying', sourceTotal)
      await forEachBatch(readSource, from, '', options.batchSize, async (accounts) => {
        const ids = accounts.map((account) => account.id)
        sums.sourceAccounts.add(accounts.map(accountLine))
        sums.targetAccounts.add((await targetAccounts(ids)).map(accountLine))
        sums.sourceSessions.add(sessionLines(await sourceSessions(ids)))
        sums.targetSessions.add(sessionLines(await targetSessions(ids)))
        verified += accounts.length
        progress.update(verified)
      })
      progress.stop()

      const accountsSource = sums.sourceAccounts.result()
      const accountsTarget = sums.targetAccounts.result()
      const sessionsSource = sums.sourceSessions.result()
      const sessionsTarget = sums.targetSessions.result()
      const targetTotal = await count(readTarget, to, '')
      return {
        source: source.description,
        target: target.description,
        sessionsFrom: redisFrom?.description ?? source.description,
        sessionsTo: redisTo?.description ?? target.description,
        resumedAfter,
        accounts: {
          copied,
          alreadyThere: done - copied,
          source: accountsSource,
          target: accountsTarget,
          targetTotal,
        },
        sessions: { copied: sessionsCopied, source: sessionsSource, target: sessionsTarget },
        auditEvents,
        ...mail,
        ...accountParts,
        ...secondFactors,
        mismatch:
          describeMismatch(accountsSource, accountsTarget, sessionsSource, sessionsTarget, {
            targetTotal,
            extraAllowed: options.force,
          }) ??
          describeAuditMismatch(auditEvents) ??
          describeRowsMismatch('e-mail codes', mail.emailCodes) ??
          describeRowsMismatch('outbox messages', mail.outbox) ??
          describeRowsMismatch('disabled webhook URLs', mail.disabledWebhookUrls) ??
          describeRowsMismatch('avatars', accountParts.avatars) ??
          describeRowsMismatch('provider links', accountParts.providerLinks) ??
          describeRowsMismatch('second factors', secondFactors.factors) ??
          describeRowsMismatch('recovery codes', secondFactors.recoveryCodes) ??
          describeRowsMismatch('service keys', secondFactors.serviceKeys),
      }
    })
  } finally {
    progress.stop()
    for (const store of opened.reverse()) await store.close().catch(() => {})
  }
}

const first = (ids: readonly string[]) => ids[0] as string
const last = (ids: readonly string[]) => ids[ids.length - 1] as string

/** Calls `handle` with each batch of accounts after `startAfter`, in id order. */
async function forEachBatch(
  read: Read,
  statements: CopyStatements,
  startAfter: string,
  batchSize: number,
  handle: (accounts: AccountRow[]) => Promise<void>,
): Promise<void> {
  let after = startAfter
  for (;;) {
    const accounts = (await read(statements.accountsAfter(after, batchSize))).map(toAccountRow)
    if (accounts.length === 0) return
    await handle(accounts)
    after = (accounts[accounts.length - 1] as AccountRow).id
  }
}

/** Reads on `db` (a pool, a connection or a transaction), as runPooled runs them. */
const readOn =
  (db: Kysely<Tables>): Read =>
  async (query) =>
    (await runPooled(db, query.sql, query.parameters)).rows

/** Runs `work` with reads that all see the database as it was when the first one ran, on one connection. */
async function withSnapshot<T>(database: SqlDatabase, work: (read: Read) => Promise<T>): Promise<T> {
  const statements = copyStatements(database.engine)
  return database.db.connection().execute(async (connection) => {
    const read = readOn(connection)
    for (const statement of statements.beginSnapshot()) await read({ sql: statement, parameters: [] })
    try {
      return await work(read)
    } finally {
      await read({ sql: statements.endSnapshot, parameters: [] }).catch(() => {})
    }
  })
}

/** An account as a line of the checksum: every column, as JSON (a nickname or a bio is any text). */
const accountLine = (row: AccountRow) =>
  `${JSON.stringify([
    row.id,
    row.email,
    row.passwordHash,
    row.emailVerified,
    row.createdAt,
    row.username,
    row.nickname,
    row.bio,
    row.role,
    row.status,
    row.updatedAt,
  ])}\n`
/**
 * A batch's sessions as lines of the checksum, in user id and id order whatever order each side returned them in:
 * every field of StoredSession, as JSON (a device is any printable text). The slot is not among them: Redis has
 * none.
 */
function sessionLines(rows: readonly SessionRow[]): string[] {
  return rows
    .map(
      (row) =>
        `${JSON.stringify([
          row.userId,
          row.id,
          row.digest,
          row.expiresAt,
          row.createdAt,
          row.lastUsedAt,
          row.device,
          row.clientAddress,
          row.previousDigest,
          row.rotatedAt,
          row.secondFactor,
        ])}\n`,
    )
    .sort()
}

function describeMismatch(
  accountsSource: Checksum,
  accountsTarget: Checksum,
  sessionsSource: Checksum,
  sessionsTarget: Checksum,
  target: { targetTotal: number; extraAllowed: boolean },
): string | null {
  const differs =
    describeDifference('accounts', accountsSource, accountsTarget) ??
    describeDifference('sessions', sessionsSource, sessionsTarget)
  if (differs !== null) return differs
  if (!target.extraAllowed && target.targetTotal !== accountsSource.count) {
    return `the target holds ${target.targetTotal} accounts, the source ${accountsSource.count}`
  }
  return null
}

function describeAuditMismatch(audit: AuditCopy | null): string | null {
  if (audit === null || audit.notCopied !== null) return null
  return describeDifference('audit events', audit.source, audit.target)
}

function describeRowsMismatch(rows: string, copy: RowsCopy | null): string | null {
  return copy === null ? null : describeDifference(rows, copy.source, copy.target)
}

/** How the target's `rows` (accounts, sessions, audit events …) differ from the source's, or null. */
function describeDifference(rows: string, source: Checksum, target: Checksum): string | null {
  if (source.count !== target.count) {
    return `the target holds ${target.count} of the source's ${source.count} ${rows}`
  }
  if (source.sha256 !== target.sha256) {
    return `the target's ${rows} differ from the source's (sha256 ${short(target.sha256)} against ${short(source.sha256)})`
  }
  return null
}

const short = (sha256: string) => sha256.slice(0, 12)

function sameStore(a: string, b: string): boolean {
  if (a.startsWith('sqlite:') && b.startsWith('sqlite:'))
    return resolve(sqlitePath(a)) === resolve(sqlitePath(b))
  return a === b
}

/** The copy's own connections: a few, and a generous bound on each statement (a batch, not a request). */
function storageFor(databaseUrl: string): StorageConfig {
  const defaults = readStorageConfig(createEnvReader({ DATABASE_URL: databaseUrl }))
  return { ...defaults, maxConnections: 4, operationTimeoutMs: 120_000 }
}

const silent = { warn() {}, info() {} }

async function openSql(url: string, side: 'source' | 'target', name: string): Promise<SqlDatabase> {
  if (url.startsWith('sqlite:')) {
    const file = sqlitePath(url)
    if (file === ':memory:')
      throw new OperationFailedError(`${name} names an in-memory database, which no other process sees`)
    if (side === 'source' && !existsSync(file))
      throw new OperationFailedError(`${name} names no SQLite file: ${file} does not exist`)
  }
  let database: SqlDatabase
  try {
    database = await openDatabase(storageFor(url), silent)
  } catch (error) {
    // openDatabase's ConfigError names DATABASE_URL; its cause is what failed
    const cause = error instanceof ConfigError ? error.cause : error
    throw new OperationFailedError(`${name} could not be opened: ${describeError(cause)}`, { cause: error })
  }
  try {
    await database.run('SELECT 1', [])
  } catch (error) {
    await database.close().catch(() => {})
    throw new OperationFailedError(`${name} could not be reached: ${describeError(error)}`, { cause: error })
  }
  return database
}

async function openRedis(url: string, name: string, options: CopyOptions): Promise<RedisSessions> {
  const { openRedisSessions } = await import('./redis-sessions.js')
  try {
    return await openRedisSessions(url, options.redisKeyPrefix)
  } catch (error) {
    throw new OperationFailedError(`${name} could not be reached: ${describeError(error)}`, { cause: error })
  }
}

async function tableNames(db: Kysely<Tables>): Promise<string[]> {
  return (await db.introspection.getTables()).map((table) => table.name)
}

/** What the target holds already ("accounts", "sessions in redis …"), or null when it is empty. */
async function holdsAccounts(target: SqlDatabase, redisTo: RedisSessions | null): Promise<string | null> {
  if ((await tableNames(target.db)).includes('users')) {
    const { rows } = await target.run(copyStatements(target.engine).anyAccount.sql, [])
    if (rows.length > 0) return 'accounts'
  }
  if (redisTo && (await redisTo.holdsAny())) return `sessions in ${redisTo.description}`
  return null
}
