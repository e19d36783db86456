import type { Clock } from '../clock.js'
import type { Env } from '../config/env-reader.js'
import { createEnvReader } from '../config/env-reader.js'
import { readStorageConfig } from '../config/storage-config.js'
import type { OperationRefusal } from '../errors.js'
import { oneLine, quoted } from '../printable.js'
import { MAX_BATCH_SIZE } from '../storage/copy/copy-statements.js'
import { type CopyReport, copyStore } from '../storage/copy/copy-store.js'
import { sqlitePath } from '../storage/open-stores.js'
import { backupSqlite } from '../storage/sqlite/backup-sqlite.js'
import { monotonicNow } from '../time.js'
import { CommandFailedError, failureMessage } from './command-errors.js'
import { parseCommandLine } from './command-line.js'
import { createCopyProgress } from './copy-progress.js'

export const STORE_USAGE = `Usage:
  tessera store copy --from <DATABASE_URL> --to <DATABASE_URL> [options]
  tessera store backup <file> [--database-url sqlite:<file>] [--force] [--json]

copy: copies every account and its unexpired sessions (nobody is logged out) between SQLite, PostgreSQL and
MySQL/MariaDB, in either direction. The target is migrated first. The source is only read, in one snapshot: stop
the service (or its writes) before a copy you switch over with. Counts and SHA-256 checksums of both sides are
compared at the end.
  --from <url>         the store to copy from (sqlite:<file>, postgres://…, mysql://…)
  --to <url>           the store to copy into
  --redis-from <url>   read the sessions from this Redis (REDIS_KEY_PREFIX) instead of --from's table
  --redis-to <url>     write the sessions into this Redis (REDIS_KEY_PREFIX) instead of --to's table
  --batch-size <n>     accounts per batch, each written in one transaction (1000; at most ${MAX_BATCH_SIZE})
  --resume             continue an interrupted copy after the last account the target holds
  --force              copy into a target that holds accounts already (those stay as they are)
  --json               print the report as JSON

backup: a consistent copy of the SQLite store (DATABASE_URL, or --database-url) while the service runs, written
with mode 0600; an existing <file> is replaced only with --force. See docs/operations.md, "Backup and restore".

Exit codes: 0 done, 1 refused, failed or not verified (one line on stderr), 2 usage error.
`

/** Where the command writes and reads: stdout and stderr, the environment (with --config's file), and the time. */
export interface StoreCommandIo {
  stdout: (text: string) => void
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
  environment: (configFile: string | undefined) => Promise<Env>
  /** The service clock: the instant the copy is taken at (which sessions have expired), the target's migrations. */
  clock: Clock
}

/** `tessera store <copy|backup>`: `args` are the arguments after `store`. Returns the exit code. */
export async function runStoreCommand(args: readonly string[], io: StoreCommandIo): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(args)
  } catch (error) {
    return usageError(io, (error as Error).message)
  }
  const { values, positionals } = parsed
  const [subcommand, ...operands] = positionals
  if (values.help || subcommand === 'help') {
    io.stdout(STORE_USAGE)
    return 0
  }
  if (subcommand === undefined) return usageError(io, 'missing subcommand (copy or backup)')
  const fail = (message: string) => {
    io.stderr.write(`tessera store ${subcommand}: ${oneLine(message)}\n`)
    return 1
  }
  let env: Env
  try {
    env = await io.environment(values.config)
  } catch (error) {
    return fail((error as Error).message)
  }
  try {
    if (subcommand === 'copy') {
      if (operands.length > 0) return usageError(io, `unexpected argument ${quoted(operands[0] ?? '')}`)
      return await copy(values, env, io)
    }
    if (subcommand === 'backup') {
      const [file, extra] = operands
      if (file === undefined) return usageError(io, 'backup needs a <file> argument')
      if (extra !== undefined) return usageError(io, `unexpected argument ${quoted(extra)}`)
      return await backup(file, values, env, io)
    }
  } catch (error) {
    return fail(
      failureMessage(error, REFUSAL_HINTS) ??
        `failed: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
  return usageError(io, `unknown subcommand ${quoted(subcommand)}`)
}

type Values = ReturnType<typeof parse>['values']

/** What the operator can do about a refusal, said in the options of this command. */
const REFUSAL_HINTS: Record<OperationRefusal, string> = {
  target_not_empty: '; --resume continues an interrupted copy, --force copies into it anyway',
  destination_exists: '; --force replaces it',
}

async function copy(values: Values, env: Env, io: StoreCommandIo): Promise<number> {
  const { from, to } = values
  if (from === undefined || to === undefined) return usageError(io, 'copy needs --from and --to')
  for (const [flag, url] of [
    ['--from', from],
    ['--to', to],
  ] as const) {
    if (!isDatabaseUrl(url)) {
      return usageError(
        io,
        `${flag} must start with sqlite:, postgres://, postgresql://, mysql:// or mariadb://`,
      )
    }
  }
  for (const [flag, url] of [
    ['--redis-from', values['redis-from']],
    ['--redis-to', values['redis-to']],
  ] as const) {
    if (url !== undefined && !isRedisUrl(url))
      return usageError(io, `${flag} must start with redis:// or rediss://`)
  }
  const batchSize = values['batch-size'] === undefined ? 1000 : Number(values['batch-size'])
  if (!/^\d+$/.test(values['batch-size'] ?? '1000') || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    return usageError(io, `--batch-size must be an integer from 1 to ${MAX_BATCH_SIZE}`)
  }
  const storage = readStorageConfig(createEnvReader(env))
  const started = monotonicNow()
  const report = await copyStore(
    {
      from,
      to,
      redisFrom: values['redis-from'] ?? null,
      redisTo: values['redis-to'] ?? null,
      redisKeyPrefix: storage.redisKeyPrefix,
      batchSize,
      resume: values.resume === true,
      force: values.force === true,
      clock: io.clock,
      names: { source: '--from', target: '--to', redisSource: '--redis-from', redisTarget: '--redis-to' },
    },
    createCopyProgress(io.stderr),
  )
  const seconds = (monotonicNow() - started) / 1000
  if (values.json) io.stdout(`${JSON.stringify({ ...report, seconds })}\n`)
  else io.stdout(describeReport(report, seconds))
  if (report.mismatch !== null) {
    io.stderr.write(`tessera store copy: verification failed: ${report.mismatch}\n`)
    return 1
  }
  return 0
}

function describeReport(report: CopyReport, seconds: number): string {
  const { accounts, sessions } = report
  const lines = [
    `copied ${accounts.copied} accounts from ${report.source} to ${report.target}` +
      (report.resumedAfter ? ` (resumed after account ${report.resumedAfter})` : '') +
      (accounts.alreadyThere > 0 ? `; ${accounts.alreadyThere} were there already and left as they are` : ''),
    `copied ${sessions.copied} unexpired sessions from ${report.sessionsFrom} to ${report.sessionsTo}`,
    ...(report.auditEvents === null
      ? []
      : [
          report.auditEvents.notCopied === null
            ? `copied ${report.auditEvents.copied} audit events (the target holds ${report.auditEvents.target.count})`
            : `audit events not copied: ${report.auditEvents.notCopied}`,
        ]),
    ...(report.emailCodes === null || report.outbox === null
      ? []
      : [
          `copied ${report.emailCodes.copied} unexpired e-mail codes and ${report.outbox.copied} outbox messages ` +
            `(the target holds ${report.emailCodes.target.count} and ${report.outbox.target.count} of them)`,
        ]),
    ...(report.disabledWebhookUrls === null
      ? []
      : [
          `copied ${report.disabledWebhookUrls.copied} disabled webhook URLs ` +
            `(the target holds ${report.disabledWebhookUrls.target.count})`,
        ]),
    ...(report.factors === null || report.recoveryCodes === null || report.serviceKeys === null
      ? []
      : [
          `copied ${report.factors.copied} second factors, ${report.recoveryCodes.copied} recovery codes and ` +
            `${report.serviceKeys.copied} service keys (the target holds ${report.factors.target.count}, ` +
            `${report.recoveryCodes.target.count} and ${report.serviceKeys.target.count} of them)`,
        ]),
    report.mismatch === null
      ? `verified: ${accounts.source.count} accounts (sha256 ${accounts.source.sha256}) and ` +
        `${sessions.source.count} sessions (sha256 ${sessions.source.sha256}) alike on both sides`
      : `not verified: ${report.mismatch}`,
    `took ${seconds.toFixed(1)} s`,
  ]
  return `${lines.join('\n')}\n`
}

async function backup(file: string, values: Values, env: Env, io: StoreCommandIo): Promise<number> {
  const url = values['database-url'] ?? readStorageConfig(createEnvReader(env)).databaseUrl
  if (!url.startsWith('sqlite:')) {
    throw new CommandFailedError(
      'DATABASE_URL is not a SQLite store; back up PostgreSQL and MySQL with their own tools (pg_dump, mysqldump)',
    )
  }
  const report = await backupSqlite(sqlitePath(url), file, { overwrite: values.force === true })
  if (values.json) io.stdout(`${JSON.stringify(report)}\n`)
  else io.stdout(`backed up ${report.accounts} accounts to ${report.file} (${report.bytes} bytes)\n`)
  return 0
}

const isDatabaseUrl = (url: string) =>
  (url.startsWith('sqlite:') && url.length > 'sqlite:'.length) ||
  (URL.canParse(url) && ['postgres:', 'postgresql:', 'mysql:', 'mariadb:'].includes(new URL(url).protocol))

const isRedisUrl = (url: string) => URL.canParse(url) && ['redis:', 'rediss:'].includes(new URL(url).protocol)

function usageError(io: StoreCommandIo, message: string): number {
  io.stderr.write(`tessera store: ${oneLine(message)}\n${STORE_USAGE}`)
  return 2
}

function parse(args: readonly string[]) {
  return parseCommandLine(args, {
    from: { type: 'string' },
    to: { type: 'string' },
    'redis-from': { type: 'string' },
    'redis-to': { type: 'string' },
    'batch-size': { type: 'string' },
    'database-url': { type: 'string' },
    resume: { type: 'boolean' },
    force: { type: 'boolean' },
    json: { type: 'boolean' },
    config: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  })
}
