import { normalizeEmail } from '../auth/email.js'
import { isUserId } from '../auth/user-id.js'
import { describeCause } from '../errors.js'
import { oneLine, quoted } from '../printable.js'
import type { SecurityEvent } from '../security-event.js'
import type { Stores } from '../storage/stores.js'
import { CommandFailedError, CommandUsageError } from './command-errors.js'
import { parseCommandLine } from './command-line.js'
import { runOnStores, type StoresCommandIo } from './runner.js'

export const AUDIT_USAGE = `Usage: tessera audit --user <email|id> [--since <when>] [--limit <n>] [--json]

Lists a user's security events from the audit trail of the store the service uses (the same DATABASE_URL and other
variables), oldest first: registered, login_succeeded, login_failed, refresh_succeeded, refresh_refused, logout,
password_reset, account_deleted, sessions_revoked, with the client address, the request id and the reason.

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
      const userId = await resolveUser(stores, invocation.user)
      const events = await stores.audit.list({ userId, since: invocation.since, limit: invocation.limit })
      io.stdout(invocation.json ? `${JSON.stringify(asJson(userId, events))}\n` : asTable(userId, events))
    },
  )
}

/** The account's id. A deleted account has no row any more, but its id still finds its events. */
async function resolveUser(stores: Stores, user: Invocation['user']): Promise<string> {
  if ('email' in user) {
    const found = await stores.users.findByEmail(user.email)
    if (found === null)
      throw new CommandFailedError(`no account has the e-mail ${user.email} (a deleted one: give its id)`)
    return found.id
  }
  if ((await stores.users.findById(user.id)) !== null) return user.id
  if ((await stores.audit.list({ userId: user.id, limit: 1 })).length > 0) return user.id
  throw new CommandFailedError(`no account and no audit event has the user id ${user.id}`)
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
const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})?)?$/

/** An ISO 8601 date or time (UTC unless it names an offset), or a duration back from `now`: epoch milliseconds. */
export function parseSince(value: string, now: number): number {
  const duration = /^(\d{1,6})([mhdw])$/.exec(value)
  if (duration) return now - Number(duration[1]) * (DURATION_UNITS_MS[duration[2] as string] as number)
  const date = ISO_DATE.exec(value)
  if (date) {
    const [year, month, day, hour = 0, minute = 0, second = 0] = date
      .slice(1, 7)
      .map((part) => Number(part ?? 0))
    const millisecond = Number((date[7] ?? '0').padEnd(3, '0'))
    const at = Date.UTC(year as number, (month as number) - 1, day, hour, minute, second, millisecond)
    const check = new Date(at)
    // Date.UTC rolls 2026-02-30 over to March: a date that does not exist is refused instead
    const exists =
      check.getUTCFullYear() === year &&
      check.getUTCMonth() === (month as number) - 1 &&
      check.getUTCDate() === day &&
      check.getUTCHours() === hour &&
      check.getUTCMinutes() === minute &&
      check.getUTCSeconds() === second
    if (exists) return at - offsetMs(date[8])
  }
  throw new CommandUsageError(
    `--since must be an ISO 8601 date or time (2026-11-01, 2026-11-01T08:00Z) or a duration (30m, 12h, 7d, 2w), got ${quoted(value)}`,
  )
}

function offsetMs(zone: string | undefined): number {
  if (zone === undefined || zone === 'Z') return 0
  const sign = zone.startsWith('-') ? -1 : 1
  const [hours, minutes] = zone.slice(1).split(':').map(Number)
  return sign * ((hours as number) * 60 + (minutes as number)) * 60_000
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
    })),
  }
}

function asTable(userId: string, events: readonly SecurityEvent[]): string {
  if (events.length === 0) return `no audit events for user ${userId}\n`
  const rows = [
    ['TIME', 'EVENT', 'REASON', 'CLIENT', 'REQUEST'],
    ...events.map((event) => [
      new Date(event.at).toISOString(),
      event.type,
      event.reason ?? '-',
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
