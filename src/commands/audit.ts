import { createAuditReader } from '../audit/audit-reader.js'
import { parseIsoTime } from '../audit/audit-time.js'
import { normalizeEmail } from '../auth/email.js'
import { isUserId } from '../auth/user-id.js'
import { describeCause } from '../errors.js'
import { oneLine, quoted } from '../printable.js'
import type { SecurityEvent } from '../security-event.js'
import { CommandFailedError, CommandUsageError } from './command-errors.js'
import { parseCommandLine } from './command-line.js'
import { runOnStores, type StoresCommandIo } from './runner.js'

export const AUDIT_USAGE = `Usage: tessera audit --user <email|id> [--since <when>] [--limit <n>] [--json]

Lists a user's security events from the audit trail of the store the service uses (the same DATABASE_URL and other
variables), oldest first: registered, login_succeeded, login_failed, refresh_succeeded, refresh_refused, logout,
password_reset, account_deleted, sessions_revoked, with the client address, the request id, the reason, and for an
admin's act (reason admin) the id of the admin who acted.

Options:
  --user <email|id>      the account, by e-mail or by id; a deleted account by its id only
  --since <when>         only the events from then on: an ISO 8601 date or time (2026-11-01, 2026-11-01T08:00Z;
                         UTC unless it names an offset) or a duration back from now (30m, 12h, 7d, 2w)
  --limit <n>            at most the latest <n> events (100; at most 10000)
  --json                 the result as one JSON object on stdout, for scripts
  --config <file.json>   read variables from a JSON object; the environment wins
  -h, --help             show this text

Events older than AUDIT_RETENTION_DAYS (90) are pruned by the service.

Exit codes: 0 done (no events is no error); 1 failed (one line on stderr: no such user, a store that fails);
2 usage error.
`

/** Where `tessera audit` writes and finds its configuration. */
export interface AuditCommandIo extends StoresCommandIo {
  /** Given whole lines, newline included. */
  stdout(text: string): void
}

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 10_000

interface Invocation {
  user: { id: string } | { email: string }
  since: number | undefined
  limit: number
  json: boolean
  config: string | undefined
}

/** `tessera audit …`: `args` are the arguments after `audit`. Resolves with the exit code (0, 1 or 2). */
export async function runAuditCommand(args: readonly string[], io: AuditCommandIo): Promise<number> {
  let invocation: Invocation | 'help'
  try {
    invocation = parseInvocation(args, io.clock.now())
  } catch (error) {
    if (!(error instanceof CommandUsageError)) throw error
    io.stderr(`tessera audit: ${oneLine(error.message)}\n`)
    return 2
  }
  if (invocation === 'help') {
    io.stdout(AUDIT_USAGE)
    return 0
  }
  return runOnStores(
    'audit',
    io,
    {
      configFile: invocation.config,
      // the accounts and the trail are in the SQL database whatever REDIS_URL says: Redis is not needed here
      storage: (config) => ({ ...config.storage, redisUrl: null }),
      describeFailure: (error) => `the store failed: ${describeCause(error)}`,
    },
    async (stores) => {
      const reader = createAuditReader(stores)
      const userId = await reader.subject(invocation.user)
      if (userId === null) {
        throw new CommandFailedError(
          'email' in invocation.user
            ? `no account has the e-mail ${invocation.user.email} (a deleted one: give its id)`
            : `no account and no audit event has the user id ${invocation.user.id}`,
        )
      }
      // the latest `limit` (the first page, newest first), printed oldest first
      const { events } = await reader.page({ userId, since: invocation.since, limit: invocation.limit })
      events.reverse()
      io.stdout(invocation.json ? `${JSON.stringify(asJson(userId, events))}\n` : asTable(userId, events))
    },
  )
}

function parseInvocation(args: readonly string[], now: number): Invocation | 'help' {
  const { values, positionals } = parseCommandLine(args, {
    user: { type: 'string' },
    since: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
    config: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  })
  if (values.help || positionals[0] === 'help') return 'help'
  if (positionals.length > 0)
    throw new CommandUsageError(`unexpected argument ${quoted(positionals[0] ?? '')}`)
  if (values.user === undefined) throw new CommandUsageError('--user <email|id> is required')
  return {
    user: parseUser(values.user),
    since: values.since === undefined ? undefined : parseSince(values.since, now),
    limit: values.limit === undefined ? DEFAULT_LIMIT : parseLimit(values.limit),
    json: values.json === true,
    config: values.config,
  }
}

function parseUser(value: string): Invocation['user'] {
  if (isUserId(value)) return { id: value }
  const email = normalizeEmail(value)
  if (email === null)
    throw new CommandUsageError(
      `--user ${quoted(value)} is neither an e-mail address nor a user id (10 digits)`,
    )
  return { email }
}

function parseLimit(value: string): number {
  const limit = /^\d+$/.test(value) ? Number(value) : Number.NaN
  if (!(limit >= 1 && limit <= MAX_LIMIT)) {
    throw new CommandUsageError(`--limit must be an integer from 1 to ${MAX_LIMIT}, got ${quoted(value)}`)
  }
  return limit
}

const DURATION_UNITS_MS: Record<string, number> = {
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
}

/** An ISO 8601 date or time (UTC unless it names an offset), or a duration back from `now`: epoch milliseconds. */
export function parseSince(value: string, now: number): number {
  const duration = /^(\d{1,6})([mhdw])$/.exec(value)
  if (duration) return now - Number(duration[1]) * (DURATION_UNITS_MS[duration[2] as string] as number)
  const at = parseIsoTime(value)
  if (at !== null) return at
  throw new CommandUsageError(
    `--since must be an ISO 8601 date or time (2026-11-01, 2026-11-01T08:00Z) or a duration (30m, 12h, 7d, 2w), got ${quoted(value)}`,
  )
}

function asJson(userId: string, events: readonly SecurityEvent[]) {
  return {
    user_id: userId,
    events: events.map((event) => ({
      time: new Date(event.at).toISOString(),
      event: event.type,
      reason: event.reason,
      client_address: event.clientAddress,
      request_id: event.requestId,
      actor: event.actor ?? null,
    })),
  }
}

function asTable(userId: string, events: readonly SecurityEvent[]): string {
  if (events.length === 0) return `no audit events for user ${userId}\n`
  const rows = [
    ['TIME', 'EVENT', 'REASON', 'ACTOR', 'CLIENT', 'REQUEST'],
    ...events.map((event) => [
      new Date(event.at).toISOString(),
      event.type,
      event.reason ?? '-',
      event.actor ?? '-',
      event.clientAddress ?? '-',
      event.requestId ?? '-',
    ]),
  ]
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? []
  const lines = rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  '),
  )
  return `user ${userId}\n${lines.join('\n')}\n`
}
