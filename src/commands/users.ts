import { newPasswordProblem } from '../auth/password-policy.js'
import {
  type AccountChange,
  parseUserRef,
  type UserAdmin,
  type UserRef,
  userAdminOn,
} from '../auth/user-admin.js'
import type { Config } from '../config.js'
import { describeCause } from '../errors.js'
import { english } from '../language/catalogues.js'
import { oneLine, quoted } from '../printable.js'
import { ROLE_NAME, type StoredSession, type UserRecord } from '../storage/stores.js'
import { commandAccountEvents } from '../webhooks/command-account-events.js'
import { CommandFailedError, CommandUsageError, PromptCancelledError } from './command-errors.js'
import { parseCommandLine } from './command-line.js'
import { runOnStores, type StoresCommandIo } from './runner.js'
import type { Terminal } from './terminal.js'

export const USERS_USAGE = `Usage: tessera users <command> [options]

Operates on the accounts of the store the service uses: the same DATABASE_URL, REDIS_URL and other variables.

Commands:
  list [--limit <n>] [--after <id>]  the accounts in id order, <n> at a time (100; at most 1000), after an id
  show <email|id>                    the account: id, e-mail, whether the e-mail is verified, username, nickname,
                                     bio (its first 80 characters; all with --json), role, status, whether a
                                     password is set, linked providers, whether it has an avatar, created_at,
                                     updated_at, how many sessions it has, its second factors
  sessions <email|id>                the account's sessions, most recently used first: id, device, client network,
                                     started, last used, refresh token expiry
  reset-password <email|id>          sets a new password, asked twice without echo on a terminal, otherwise the
                                     first line of stdin; registration's rules apply (8 to 100 characters); every
                                     session is ended
  revoke <email|id>                  ends every session: the user is logged out at the next refresh
  mfa-reset <email|id>               removes every second factor and recovery code (a lost phone) and ends every
                                     session: the user signs in with the first factor alone again
  set-role <email|id> <role>         gives the account a role (user, the default, or 1 to 32 of a-z 0-9 _ -
                                     starting with a letter) and ends every session: access tokens carry the
                                     role from the user's next login (a token without one is a user's)
  disable <email|id>                 the account can no longer log in or refresh; every session is ended
  enable <email|id>                  the account can log in again
  delete <email|id> [--yes]          deletes the account and its sessions and erases the client addresses of its
                                     audit events; asks on a terminal, needs --yes otherwise

Options:
  --json                 the result as one JSON object on stdout, for scripts
  -y, --yes              delete without asking
  --config <file.json>   read variables from a JSON object; the environment wins
  -h, --help             show this text

The account whose role is ADMIN_ROLE (tessera-admin) uses the admin API. These commands are not held to its rule
that the last active admin cannot be demoted, disabled or deleted (the shell is how an operator recovers): they warn
on stderr when a change leaves no active admin.

Access tokens already issued still read until they expire (AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES, 15 by default),
but change nothing: reset-password, revoke, mfa-reset, set-role, disable and delete end the account's sessions, so the user is
logged out at the next refresh, and a token issued before set-role keeps the role it had until then.

Exit codes: 0 done; 1 failed (one line on stderr: no such account, a refused password, a store that fails);
2 usage error.
`

/** Where `tessera users` writes, reads and finds its configuration. */
export interface UsersCommandIo extends StoresCommandIo {
  /** Given whole lines, newline included. */
  stdout(text: string): void
  terminal: Terminal
}

const VERBS = [
  'list',
  'show',
  'sessions',
  'reset-password',
  'revoke',
  'mfa-reset',
  'set-role',
  'disable',
  'enable',
  'delete',
] as const
type Verb = (typeof VERBS)[number]

/** The options each verb takes besides --json, --config and --help. */
const VERB_OPTIONS: Record<Verb, readonly string[]> = {
  list: ['limit', 'after'],
  show: [],
  sessions: [],
  'reset-password': [],
  revoke: [],
  'mfa-reset': [],
  'set-role': [],
  disable: [],
  enable: [],
  delete: ['yes'],
}

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000

interface Invocation {
  verb: Verb
  /** The <email|id> of every verb but list, which has none (null). */
  user: UserRef | null
  /** The <role> of set-role (ROLE_NAME); null for every other verb. */
  role: string | null
  json: boolean
  yes: boolean
  limit: number
  after: string | undefined
  config: string | undefined
}

/** `tessera users <verb> …`: `args` are the arguments after `users`. Resolves with the exit code (0, 1 or 2). */
export async function runUsersCommand(args: readonly string[], io: UsersCommandIo): Promise<number> {
  let invocation: Invocation | 'help'
  try {
    invocation = parseInvocation(args, io.terminal)
  } catch (error) {
    io.stderr(`tessera users: ${oneLine((error as Error).message)}\n${USERS_USAGE}`)
    return 2
  }
  if (invocation === 'help') {
    io.stdout(USERS_USAGE)
    return 0
  }
  return runOnStores(
    'users',
    io,
    {
      configFile: invocation.config,
      describeFailure: (error) =>
        error instanceof PromptCancelledError ? 'cancelled; nothing was changed' : describeCause(error),
    },
    async (stores, config) => {
      // the acts' webhook events, for the running service to deliver (docs/api.md R6.5.9)
      const webhooks = await commandAccountEvents(config, stores, io.clock)
      const admin = userAdminOn(stores, config, io.clock, webhooks)
      await runVerb(invocation, { admin, config, io })
    },
  )
}

function parseInvocation(args: readonly string[], terminal: Terminal): Invocation | 'help' {
  const { values, positionals } = parse(args)
  const [verb, target, ...rest] = positionals
  if (values.help || verb === 'help') return 'help'
  if (verb === undefined) throw new CommandUsageError('missing command')
  if (!isVerb(verb)) throw new CommandUsageError(`unknown command ${quoted(verb)}`)
  for (const option of ['limit', 'after', 'yes'] as const) {
    if (values[option] !== undefined && !VERB_OPTIONS[verb].includes(option))
      throw new CommandUsageError(`${verb} takes no --${option}`)
  }
  let user: UserRef | null = null
  let role: string | null = null
  if (verb === 'list') {
    if (target !== undefined) throw new CommandUsageError(`unexpected argument ${quoted(target)}`)
  } else {
    if (target === undefined) throw new CommandUsageError(`${verb} needs an <email|id> argument`)
    if (verb === 'set-role') {
      role = rest.shift() ?? null
      if (role === null) throw new CommandUsageError('set-role needs a <role> argument after the <email|id>')
      if (!ROLE_NAME.test(role))
        throw new CommandUsageError(
          `${quoted(role)} is not a role name: 1 to 32 of a-z 0-9 _ - starting with a letter (user is the default)`,
        )
    }
    const [extra] = rest
    if (extra !== undefined) throw new CommandUsageError(`unexpected argument ${quoted(extra)}`)
    user = parseUserRef(target)
    if (user === null)
      throw new CommandUsageError(`${quoted(target)} is neither an e-mail address nor a user id (10 digits)`)
  }
  if (values.after !== undefined && !/^[1-9]\d{9}$/.test(values.after))
    throw new CommandUsageError(`--after takes a user id (10 digits), got ${quoted(values.after)}`)
  const limit = values.limit === undefined ? DEFAULT_LIMIT : Number(values.limit)
  if (!/^\d+$/.test(values.limit ?? '1') || limit < 1 || limit > MAX_LIMIT)
    throw new CommandUsageError(
      `--limit takes a whole number from 1 to ${MAX_LIMIT}, got ${quoted(values.limit ?? '')}`,
    )
  const yes = values.yes === true
  // checked before anything is opened: a script that forgot --yes changes nothing
  if (verb === 'delete' && !yes && !terminal.interactive)
    throw new CommandUsageError('delete asks for confirmation on a terminal; without one, pass --yes')
  return {
    verb,
    user,
    role,
    json: values.json === true,
    yes,
    limit,
    after: values.after,
    config: values.config,
  }
}

function parse(args: readonly string[]) {
  return parseCommandLine(args, {
    json: { type: 'boolean' },
    limit: { type: 'string' },
    after: { type: 'string' },
    yes: { type: 'boolean', short: 'y' },
    config: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  })
}

function isVerb(value: string): value is Verb {
  return (VERBS as readonly string[]).includes(value)
}

interface VerbContext {
  admin: UserAdmin
  config: Config
  io: UsersCommandIo
}

async function runVerb(invocation: Invocation, context: VerbContext): Promise<void> {
  const { admin, io } = context
  const print = (json: unknown, human: string) =>
    io.stdout(invocation.json ? `${JSON.stringify(json)}\n` : `${human}\n`)

  if (invocation.user === null) {
    // list: one more than asked tells whether another page follows
    const found = await admin.list({ after: invocation.after, limit: invocation.limit + 1 })
    const page = found.slice(0, invocation.limit)
    const nextAfter = found.length > invocation.limit ? (page.at(-1)?.id ?? null) : null
    print({ users: page.map(accountFields), next_after: nextAfter }, listText(page, nextAfter, invocation))
    return
  }

  const user = await admin.find(invocation.user)
  const named = `${user.email} (${user.id})`
  const adminRole = context.config.admin.role
  /**
   * docs/api.md R4.27.8: the shell is not held to the last-admin rule (it is how an operator recovers), but says so when
   * a change took the role of the admin API from its last active account.
   */
  const warnIfNoAdminLeft = async (changed: boolean) => {
    if (!changed || user.role !== adminRole || user.status !== 'active') return
    if ((await admin.activeAdmins()) > 0) return
    io.stderr(
      `tessera users: warning: no active account has the role ${adminRole} (ADMIN_ROLE) now: nobody can use the ` +
        `admin API until one is given it (tessera users set-role <email|id> ${adminRole})\n`,
    )
  }
  /** The answer of a verb that logs the user out: with by when every access token issued before now has expired. */
  const printLoggedOut = (json: Record<string, unknown>, human: string) => {
    const expireBy = iso(io.clock.now() + context.config.auth.accessTokenTtlSeconds * 1000)
    print(
      { ...publicAccount(user), ...json, access_tokens_expire_by: expireBy },
      `${human}\nAccess tokens already issued still read until they expire, by ${expireBy} at the latest, and change nothing.`,
    )
  }

  switch (invocation.verb) {
    case 'show': {
      const details = await admin.details(user)
      const sessions = details.sessions.length
      const expiries = details.sessions.map((session) => session.expiresAt)
      const expiresAt = sessions === 0 ? null : iso(Math.max(...expiries))
      const factors = details.factors.map(({ id, type, name }) => ({ id, type, name }))
      print(
        {
          ...accountFields(user),
          sessions,
          refresh_token_stored: expiresAt !== null,
          refresh_token_expires_at: expiresAt,
          factors,
        },
        [
          `id             ${user.id}`,
          `e-mail         ${user.email} (${user.emailVerified ? 'verified' : 'not verified'})`,
          // the account's own text, escaped and quoted: a nickname or bio cannot recolour the terminal or forge a line
          `username       ${user.username === null ? 'none' : oneLine(user.username)}`,
          `nickname       ${user.nickname === null ? 'none' : quoted(user.nickname)}`,
          `bio            ${user.bio === null ? 'none' : quoted(user.bio)}`,
          `role           ${oneLine(user.role)}`,
          `status         ${user.status}`,
          // an account without a usable password logs in with a code, a provider, or after a reset (docs/api.md §4.15)
          `password       ${user.passwordHash === null ? 'none (reset-password sets one)' : 'set'}`,
          `providers      ${user.providers.length === 0 ? 'none' : oneLine(user.providers.join(', '))}`,
          `avatar         ${user.avatarId === null ? 'no' : 'yes'}`,
          `created at     ${user.createdAt}`,
          `updated at     ${user.updatedAt}`,
          `sessions       ${sessions === 0 ? 'none (logged out)' : `${sessions}, the last expiring ${expiresAt}`}`,
          `factors        ${factors.length === 0 ? 'none' : factors.map((factor) => `${factor.type} ${quoted(factor.name)}`).join(', ')}`,
        ].join('\n'),
      )
      return
    }
    case 'sessions': {
      const sessions = await admin.sessions(user)
      print(
        {
          ...publicAccount(user),
          sessions: sessions.map((session) => ({
            id: session.id,
            device: session.device,
            client_address: session.clientAddress,
            created_at: iso(session.createdAt),
            last_used_at: iso(session.lastUsedAt),
            expires_at: iso(session.expiresAt),
          })),
        },
        sessionsText(named, sessions),
      )
      return
    }
    case 'reset-password': {
      const password = await readNewPassword(io.terminal)
      const problem = newPasswordProblem(password)
      if (problem !== null)
        throw new CommandFailedError(`the password ${english(problem)}; nothing was changed`)
      const hash = await hashPassword(context.config, password)
      await admin.resetPassword(user, hash)
      printLoggedOut(
        { password_reset: true, refresh_token_revoked: true },
        `Password of ${named} reset, and its sessions ended: the user logs in again with the new password.`,
      )
      return
    }
    case 'revoke': {
      const ended = await admin.revoke(user)
      printLoggedOut(
        { refresh_token_revoked: true, sessions_ended: ended },
        `${ended === 1 ? '1 session' : `${ended} sessions`} of ${named} ended: the user is logged out at the next refresh.`,
      )
      return
    }
    case 'mfa-reset': {
      const { factorsRemoved, sessionsEnded } = await admin.mfaReset(user)
      printLoggedOut(
        { factors_removed: factorsRemoved, refresh_token_revoked: true, sessions_ended: sessionsEnded },
        `${factorsRemoved === 1 ? '1 second factor' : `${factorsRemoved} second factors`} of ${named} removed, and its sessions ended: the user signs in with the first factor alone.`,
      )
      return
    }
    case 'set-role': {
      const role = invocation.role as string
      const change = await admin.setRole(user, role)
      await warnIfNoAdminLeft(change.changed)
      const json = {
        role,
        previous_role: user.role,
        ...changeFields(change),
        sessions_ended: change.sessionsEnded,
      }
      if (!change.changed) {
        print(
          { ...publicAccount(user), ...json },
          `${named} already has the role ${role}; nothing was changed.`,
        )
        return
      }
      printLoggedOut(
        json,
        `role: ${oneLine(user.role)} -> ${role} for ${named}; ${sessionsEnded(change)}: the new role is in the ` +
          `user's tokens from the next login.`,
      )
      return
    }
    case 'disable': {
      const change = await admin.disable(user)
      await warnIfNoAdminLeft(change.changed)
      const json = {
        status: change.user.status,
        previous_status: user.status,
        ...changeFields(change),
        sessions_ended: change.sessionsEnded,
      }
      if (change.changed) {
        printLoggedOut(
          json,
          `status: active -> disabled for ${named}; ${sessionsEnded(change)}: the user can no longer log in or ` +
            'refresh.',
        )
      } else if (change.sessionsEnded > 0) {
        // a disable whose end of the sessions failed, run again
        printLoggedOut(json, `${named} was already disabled; ${sessionsEnded(change)}.`)
      } else {
        print({ ...publicAccount(user), ...json }, `${named} is already disabled; nothing was changed.`)
      }
      return
    }
    case 'enable': {
      const change = await admin.enable(user)
      const json = { status: change.user.status, previous_status: user.status, ...changeFields(change) }
      print(
        { ...publicAccount(user), ...json },
        change.changed
          ? `status: disabled -> active for ${named}: the user can log in again.`
          : `${named} is already active; nothing was changed.`,
      )
      return
    }
    case 'delete': {
      if (!invocation.yes) await confirmDeletion(io.terminal, user)
      const { addressesErased } = await admin.delete(user)
      await warnIfNoAdminLeft(true)
      printLoggedOut(
        { deleted: true, audit_addresses_erased: addressesErased },
        `Account ${named} deleted, with its sessions. Its audit events are kept until AUDIT_RETENTION_DAYS ` +
          `prunes them; the client addresses of ${addressesErased} were erased.`,
      )
      return
    }
  }
}

/** `tessera users sessions`: one line per session, most recently used first, or a line saying there is none. */
function sessionsText(named: string, sessions: readonly StoredSession[]): string {
  if (sessions.length === 0) return `${named} has no session (logged out).`
  const lines = sessions.map((session) =>
    [
      session.id,
      oneLine(session.device === '' ? 'unknown device' : session.device),
      session.clientAddress ?? '-',
      `started ${iso(session.createdAt)}`,
      `last used ${iso(session.lastUsedAt)}`,
      `expires ${iso(session.expiresAt)}`,
    ].join('  '),
  )
  return [
    `${sessions.length === 1 ? '1 session' : `${sessions.length} sessions`} of ${named}:`,
    ...lines,
  ].join('\n')
}

/** Asked twice without echo on a terminal; otherwise the first line of stdin. */
async function readNewPassword(terminal: Terminal): Promise<string> {
  if (!terminal.interactive) {
    const line = await terminal.readLine()
    if (line === null)
      throw new CommandFailedError('no password on stdin (its first line is read); nothing was changed')
    return line
  }
  const first = await terminal.readSecret('New password: ')
  const second = await terminal.readSecret('The same password again: ')
  if (first !== second) throw new CommandFailedError('the two passwords differ; nothing was changed')
  return first
}

/** The operator types the account's e-mail address: a stray Enter or "y" deletes nothing. */
async function confirmDeletion(terminal: Terminal, user: UserRecord): Promise<void> {
  const answer = await terminal.ask(
    `Delete the account ${user.email} (${user.id}) and its sessions for good? Type its e-mail address to confirm: `,
  )
  if (answer.trim().toLowerCase() !== user.email)
    throw new CommandFailedError('not confirmed; nothing was deleted')
}

/** Argon2id with the service's configured parameters, on a thread of its own, as the service hashes. */
async function hashPassword(config: Config, password: string): Promise<string> {
  const { openPasswordHashing } = await import('../auth/password-hasher.js')
  const hashing = openPasswordHashing({ params: config.auth.argon2, threads: 1, queueLimit: 1 })
  try {
    return await hashing.hasher.hash(password)
  } catch (error) {
    throw new CommandFailedError(
      `the password could not be hashed; nothing was changed: ${describeCause(error)}`,
      {
        cause: error,
      },
    )
  } finally {
    await hashing.close()
  }
}

/** Names the account in the answer of a verb that acts on it. */
function publicAccount(user: UserRecord) {
  return { id: user.id, email: user.email, email_verified: user.emailVerified, created_at: user.createdAt }
}

/** The account as `list` and `show` print it with --json: every field, as the API names them, but the password hash. */
function accountFields(user: UserRecord) {
  return {
    id: user.id,
    email: user.email,
    email_verified: user.emailVerified,
    username: user.username,
    nickname: user.nickname,
    bio: user.bio,
    avatar_id: user.avatarId,
    role: user.role,
    status: user.status,
    password_set: user.passwordHash !== null,
    providers: [...user.providers],
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  }
}

/** What set-role, disable and enable add to the account with --json. */
function changeFields(change: AccountChange) {
  return { changed: change.changed, updated_at: change.user.updatedAt }
}

function sessionsEnded(change: AccountChange): string {
  return `${change.sessionsEnded === 1 ? '1 session' : `${change.sessionsEnded} sessions`} ended`
}

function listText(page: readonly UserRecord[], nextAfter: string | null, invocation: Invocation): string {
  if (page.length === 0)
    return invocation.after === undefined ? 'No accounts.' : `No accounts after ${invocation.after}.`
  const rows = page.map((user) => [
    user.id,
    user.email,
    user.username === null ? '-' : oneLine(user.username),
    user.emailVerified ? 'yes' : 'no',
    oneLine(user.role),
    user.status,
    user.createdAt,
  ])
  const header = ['ID', 'E-MAIL', 'USERNAME', 'VERIFIED', 'ROLE', 'STATUS', 'CREATED AT']
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  )
  // every column padded to its width but the last
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
  const lines = [line(header), ...rows.map(line)]
  if (nextAfter !== null)
    lines.push(`More: tessera users list --limit ${invocation.limit} --after ${nextAfter}`)
  return lines.join('\n')
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString()
}
