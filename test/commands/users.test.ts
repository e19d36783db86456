import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { systemClock } from '../../src/clock.js'
import type { Terminal } from '../../src/commands/terminal.js'
import { runUsersCommand, USERS_USAGE } from '../../src/commands/users.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { type BackendInstance, backends } from '../support/backends.js'
import {
  bearer,
  call,
  decodeJwt,
  expectError,
  PASSWORD,
  type Registered,
  registerUser,
} from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { runCli } from '../support/process.js'
import { startTestService, TEST_ENV, type TestService } from '../support/test-service.js'

const NEW_PASSWORD = 'a new password, long enough'
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** The fields of a new account, as list and show print them with --json. */
const newAccount = (user: Registered) => ({
  id: user.id,
  email: user.email,
  email_verified: false,
  username: null,
  nickname: null,
  bio: null,
  avatar_id: null,
  role: 'user',
  status: 'active',
  password_set: true,
  providers: [],
  created_at: user.createdAt,
  updated_at: user.createdAt,
})

/** A stdin that is no terminal and holds nothing. */
const pipedStdin: Terminal = {
  interactive: false,
  readSecret: () => Promise.reject(new Error('not a terminal')),
  ask: () => Promise.reject(new Error('not a terminal')),
  readLine: async () => null,
}

/**
 * The command runs on each SQL engine once and with sessions in Redis once: SQLite, MySQL/MariaDB, and PostgreSQL
 * with Redis (those of them this machine has). Each test spawns the command several times (about 35 s a backend);
 * what differs between engines is the stores', whose contract tests (test/storage/) run on every backend.
 */
const COMMAND_BACKENDS = backends.filter((backend) =>
  ['sqlite', 'mysql', 'postgres+redis'].includes(backend.name),
)

/**
 * The verbs of issue 22 (set-role, disable, enable, and the new fields of show and list) run on the embedded store
 * and on PostgreSQL with Redis, the two ends of how sessions are kept (test/storage/profile-stores.contract.test.ts
 * covers every engine).
 */
const PROFILE_BACKENDS = new Set([COMMAND_BACKENDS[0]?.name, COMMAND_BACKENDS.at(-1)?.name])

/**
 * `tessera users` (docs/administration.md "Administering users"), built (npm run build) and run as the operator runs it, against the
 * store of a running service: each verb, --json, the exit codes, and what the service then does for the user.
 */
describe.each(COMMAND_BACKENDS)('tessera users [$name]', (backend) => {
  const profileBackend = PROFILE_BACKENDS.has(backend.name)
  let instance: BackendInstance
  let service: TestService
  beforeAll(async () => {
    instance = await backend.setup()
    service = await startTestService(backend, { instance })
  })
  afterAll(async () => {
    await service?.close()
    await instance?.teardown()
  })

  const users = (args: string[], input?: string) => runCli(['users', ...args], instance.env, input)
  const login = (email: string, password: string) =>
    call(service.app, 'POST', '/auth/login', { body: { email, password } })
  const refresh = (token: string) =>
    call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: token } })
  const events = (userId: string): Promise<SecurityEvent[]> => service.stores.audit.list({ userId })
  /** The answer of a command that failed: exit 1, nothing on stdout, one line on stderr. */
  const expectFailure = (result: Awaited<ReturnType<typeof users>>, line: string) => {
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe(`tessera users: ${line}\n`)
    expect(result.code).toBe(1)
  }
  const operatorEvent = (type: string, userId: string) =>
    expect.objectContaining({ type, userId, reason: 'operator', clientAddress: null, requestId: null })

  it('list: every account in id order, page by page, as a table or JSON', async () => {
    const mine = await Promise.all([1, 2, 3].map(() => registerUser(service.app)))
    const listed: Array<Record<string, unknown>> = []
    let after: string | null = null
    let pages = 0
    do {
      const result = await users([
        'list',
        '--json',
        '--limit',
        '2',
        ...(after === null ? [] : ['--after', after]),
      ])
      expect(result.code, result.stderr).toBe(0)
      const page = JSON.parse(result.stdout)
      expect(page.users.length).toBeLessThanOrEqual(2)
      listed.push(...page.users)
      after = page.next_after
      pages++
    } while (after !== null)
    expect(pages).toBeGreaterThanOrEqual(2)
    const ids = listed.map((user) => user.id as string)
    expect(ids).toEqual([...ids].sort())
    expect(new Set(ids).size).toBe(ids.length)
    for (const user of mine) expect(listed).toContainEqual(newAccount(user))
    expect(JSON.stringify(listed)).not.toContain('argon2')

    const table = await users(['list'])
    expect(table.code).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID {10}E-MAIL +USERNAME +VERIFIED {2}ROLE +STATUS +CREATED AT$/)
    for (const user of mine) {
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(`^${user.id}  ${user.email} +- +no +user +active +${user.createdAt}$`),
        ),
      )
    }
    expect(table.stdout).not.toContain('argon2')
  })

  it('show <email|id>: the account and whether a refresh token is stored', async () => {
    const user = await registerUser(service.app)
    const byEmail = await users(['show', user.email.toUpperCase(), '--json'])
    expect(byEmail.code, byEmail.stderr).toBe(0)
    const shown = JSON.parse(byEmail.stdout)
    expect(shown).toEqual({
      ...newAccount(user),
      sessions: 1,
      refresh_token_stored: true,
      refresh_token_expires_at: expect.stringMatching(ISO_TIME),
      factors: [],
    })
    // 7 days from the login, give or take the test's own time
    const lifetime = Date.parse(shown.refresh_token_expires_at) - Date.now()
    expect(lifetime).toBeGreaterThan(7 * 86_400_000 - 60_000)
    expect(lifetime).toBeLessThanOrEqual(7 * 86_400_000)

    const human = await users(['show', user.id])
    expect(human.code).toBe(0)
    expect(human.stdout).toBe(
      `id             ${user.id}\ne-mail         ${user.email} (not verified)\n` +
        'username       none\nnickname       none\nbio            none\nrole           user\n' +
        'status         active\npassword       set\nproviders      none\navatar         no\n' +
        `created at     ${user.createdAt}\nupdated at     ${user.createdAt}\n` +
        `sessions       1, the last expiring ${shown.refresh_token_expires_at}\n` +
        'factors        none\n',
    )

    await call(service.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(user.accessToken) })
    const loggedOut = JSON.parse((await users(['show', user.id, '--json'])).stdout)
    expect(loggedOut).toMatchObject({
      sessions: 0,
      refresh_token_stored: false,
      refresh_token_expires_at: null,
    })
    expect((await users(['show', user.email])).stdout).toContain('\nsessions       none (logged out)\n')
  })

  it('show and list: an account whose address was proved and whose password was cancelled says so', async () => {
    const user = await registerUser(service.app)
    expect(await service.stores.users.claimAddress(user.id)).toBe(true)
    const shown = JSON.parse((await users(['show', user.id, '--json'])).stdout)
    expect(shown).toMatchObject({ email_verified: true, password_set: false })
    const human = (await users(['show', user.email])).stdout
    expect(human).toContain(`\ne-mail         ${user.email} (verified)\n`)
    expect(human).toContain('\npassword       none (reset-password sets one)\n')
    const listed = JSON.parse((await users(['list', '--json', '--limit', '1000'])).stdout)
    expect(listed.users).toContainEqual({ ...newAccount(user), email_verified: true, password_set: false })
    expect((await users(['list', '--limit', '1000'])).stdout).toMatch(
      new RegExp(`\n${user.id}  ${user.email} +- +yes +user +active +${user.createdAt}\n`),
    )
  })

  it.runIf(profileBackend)(
    "show and list: the profile, the linked providers and the avatar; the user's own text escaped",
    async () => {
      const user = await registerUser(service.app)
      const username = `ada_${randomBytes(4).toString('hex')}`
      // what a client could have stored: escape sequences and a forged line in the nickname, a long bio
      const nickname = 'Ada \u001b[31mred\nforged line'
      const bio = `${'b'.repeat(79)}\u202e${'c'.repeat(220)}`
      const updatedAt = new Date(Date.now() + 1000).toISOString()
      expect(await service.stores.users.updateProfile(user.id, { username, nickname, bio }, updatedAt)).toBe(
        'updated',
      )
      expect(
        await service.stores.providerLinks.link({
          provider: 'github',
          subject: randomBytes(6).toString('hex'),
          userId: user.id,
          email: null,
          createdAt: Date.now(),
        }),
      ).toBe('linked')
      const avatarId = randomBytes(16).toString('hex')
      expect(
        await service.stores.avatars.put({
          id: avatarId,
          userId: user.id,
          contentType: 'image/png',
          data: Buffer.from('not really a png'),
          createdAt: Date.now(),
        }),
      ).toBe(true)
      const account = {
        ...newAccount(user),
        username,
        nickname,
        bio,
        avatar_id: avatarId,
        providers: ['github'],
        updated_at: updatedAt,
      }

      const shown = JSON.parse((await users(['show', user.id, '--json'])).stdout)
      expect(shown).toEqual({
        ...account,
        sessions: 1,
        refresh_token_stored: true,
        refresh_token_expires_at: expect.stringMatching(ISO_TIME),
        factors: [],
      })
      const human = await users(['show', user.email])
      expect(human.code, human.stderr).toBe(0)
      expect(human.stdout).toBe(
        `id             ${user.id}\ne-mail         ${user.email} (not verified)\n` +
          `username       ${username}\n` +
          'nickname       "Ada \\x1b[31mred\\nforged line"\n' +
          `bio            "${'b'.repeat(79)}\\u202e"… (220 more characters)\n` +
          'role           user\nstatus         active\npassword       set\nproviders      github\navatar         yes\n' +
          `created at     ${user.createdAt}\nupdated at     ${updatedAt}\n` +
          `sessions       1, the last expiring ${shown.refresh_token_expires_at}\n` +
          'factors        none\n',
      )
      expect(human.stdout).not.toContain('\u001b')
      expect(human.stdout).not.toContain('\u202e')

      const listed = JSON.parse((await users(['list', '--json', '--limit', '1000'])).stdout)
      expect(listed.users).toContainEqual(account)
      expect((await users(['list', '--limit', '1000'])).stdout).toMatch(
        new RegExp(`\n${user.id}  ${user.email} +${username} +no +user +active +${user.createdAt}\n`),
      )
    },
  )

  it('sessions <email|id>: the sessions, most recently used first, as lines or JSON', async () => {
    const user = await registerUser(service.app)
    const json = JSON.parse((await users(['sessions', user.email, '--json'])).stdout)
    // single mode: registerUser's login replaced the registration's session
    expect(json).toEqual({
      id: user.id,
      email: user.email,
      email_verified: false,
      created_at: user.createdAt,
      sessions: [
        {
          id: expect.stringMatching(/^[0-9a-f]{32}$/),
          device: 'lightMyRequest',
          client_address: '127.0.0.0/24',
          created_at: expect.stringMatching(/Z$/),
          last_used_at: expect.stringMatching(/Z$/),
          expires_at: expect.stringMatching(/Z$/),
        },
      ],
    })
    const [session] = json.sessions
    const human = await users(['sessions', user.id])
    expect(human.stdout).toBe(
      `1 session of ${user.email} (${user.id}):\n` +
        `${session.id}  lightMyRequest  127.0.0.0/24  started ${session.created_at}  ` +
        `last used ${session.last_used_at}  expires ${session.expires_at}\n`,
    )
    await call(service.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(user.accessToken) })
    expect((await users(['sessions', user.id])).stdout).toBe(
      `${user.email} (${user.id}) has no session (logged out).\n`,
    )
  })

  it('an unknown e-mail or id: exit 1, one line on stderr, for every verb', async () => {
    for (const verb of ['show', 'reset-password', 'revoke', 'disable', 'enable']) {
      expectFailure(
        await users([verb, 'nobody-here@example.com']),
        'no account has the e-mail nobody-here@example.com',
      )
    }
    expectFailure(await users(['delete', '1000000001', '--yes']), 'no account has the id 1000000001')
    expectFailure(await users(['set-role', '1000000001', 'admin']), 'no account has the id 1000000001')
    expectFailure(await users(['show', '1000000001', '--json']), 'no account has the id 1000000001')
  })

  it('R3.10 reset-password from stdin: the new password logs in, the old one and the old refresh token are refused', async () => {
    const user = await registerUser(service.app)
    const result = await users(
      ['reset-password', user.email, '--json'],
      `${NEW_PASSWORD}\nignored second line\n`,
    )
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe('')
    const answer = JSON.parse(result.stdout)
    expect(answer).toEqual({
      id: user.id,
      email: user.email,
      email_verified: false,
      created_at: user.createdAt,
      password_reset: true,
      refresh_token_revoked: true,
      access_tokens_expire_by: expect.any(String),
    })
    // the access token lifetime (15 minutes) from now
    expect(Date.parse(answer.access_tokens_expire_by) - Date.now()).toBeGreaterThan(14 * 60_000)

    expectError(await refresh(user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expectError(await login(user.email, PASSWORD), 401, MESSAGES.invalidCredentials)
    const again = await login(user.email, NEW_PASSWORD)
    expect(again.status, again.text).toBe(200)
    expect((await refresh(again.body.data.refresh_token)).status).toBe(200)
    // the hash has the configured Argon2 parameters: a login does not re-hash it
    const stored = await service.stores.users.findById(user.id)
    expect(stored?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$/)
    expect(await events(user.id)).toContainEqual(operatorEvent('password_reset', user.id))
  })

  it('reset-password, human output: says the user was logged out and how long access tokens live on', async () => {
    const user = await registerUser(service.app)
    const result = await users(['reset-password', user.id], `${NEW_PASSWORD}\r\n`)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(
      new RegExp(
        `^Password of ${user.email} \\(${user.id}\\) reset, and its sessions ended: .*\\n` +
          'Access tokens already issued still read until they expire, by \\S+Z at the latest, and change nothing\\.\\n$',
      ),
    )
    // the line ending is not part of the password
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200)
  })

  it('reset-password with a password the rules refuse, or none: exit 1 and nothing changed', async () => {
    const user = await registerUser(service.app)
    const before = await service.stores.users.findById(user.id)
    for (const [input, line] of [
      ['short\n', 'the password must have 8 to 100 characters of well-formed Unicode; nothing was changed'],
      [
        `${'x'.repeat(101)}\n`,
        'the password must have 8 to 100 characters of well-formed Unicode; nothing was changed',
      ],
      ['', 'no password on stdin (its first line is read); nothing was changed'],
    ] as const) {
      expectFailure(await users(['reset-password', user.email], input), line)
    }
    expectFailure(
      await users(['reset-password', user.email]),
      'no password on stdin (its first line is read); nothing was changed',
    )
    expect(await service.stores.users.findById(user.id)).toEqual(before)
    expect((await refresh(user.refreshToken)).status).toBe(200)
    expect((await login(user.email, PASSWORD)).status).toBe(200)
    expect(await events(user.id)).not.toContainEqual(expect.objectContaining({ type: 'password_reset' }))
  })

  it('R3.9 R3.12 revoke: the next refresh is refused; the access token lives until it expires; logging in works', async () => {
    const user = await registerUser(service.app)
    const result = await users(['revoke', user.email])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(
      new RegExp(
        `^1 session of ${user.email} \\(${user.id}\\) ended: the user is logged out at the next refresh\\.\\n` +
          'Access tokens already issued still read until they expire, by \\S+Z at the latest, and change nothing\\.\\n$',
      ),
    )
    expectError(await refresh(user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expect((await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })).status).toBe(
      200,
    )
    expect(await events(user.id)).toContainEqual(operatorEvent('sessions_revoked', user.id))

    const again = await login(user.email, PASSWORD)
    const json = await users(['revoke', user.id, '--json'])
    expect(JSON.parse(json.stdout)).toEqual({
      id: user.id,
      email: user.email,
      email_verified: false,
      created_at: user.createdAt,
      refresh_token_revoked: true,
      sessions_ended: 1,
      access_tokens_expire_by: expect.any(String),
    })
    expectError(await refresh(again.body.data.refresh_token), 401, MESSAGES.refreshTokenInvalid)
  })

  it('mfa-reset: every second factor and recovery code goes, the sessions end, and the password signs in alone', async () => {
    const user = await registerUser(service.app)
    // an authenticator as a confirmation leaves it (its secret sealed by the service: opaque here)
    const factor = {
      id: randomBytes(16).toString('hex'),
      userId: user.id,
      type: 'totp' as const,
      name: 'Authenticator app',
      confirmed: true,
      secret: 'v1.sealed-elsewhere',
      lastStep: 1,
      credentialId: null,
      publicKey: null,
      counter: 0,
      backedUp: false,
      transports: [],
      createdAt: Date.now(),
      lastUsedAt: Date.now(),
    }
    expect(await service.stores.factors.add(factor)).toBe('added')
    await service.stores.factors.replaceRecoveryCodes(user.id, ['a'.repeat(64)])
    expect((await login(user.email, PASSWORD)).body.data.mfa_required).toBe(true)
    const shown = JSON.parse((await users(['show', user.id, '--json'])).stdout)
    expect(shown.factors).toEqual([{ id: factor.id, type: 'totp', name: 'Authenticator app' }])
    expect((await users(['show', user.email])).stdout).toContain(
      '\nfactors        totp "Authenticator app"\n',
    )

    const result = await users(['mfa-reset', user.email, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({
      id: user.id,
      factors_removed: 1,
      refresh_token_revoked: true,
      sessions_ended: 1,
    })
    expect(await service.stores.factors.list(user.id)).toEqual([])
    expect(await service.stores.factors.recoveryCodesLeft(user.id)).toBe(0)
    expectError(await refresh(user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expect((await login(user.email, PASSWORD)).body.data.access_token).toEqual(expect.any(String))
    expect(await events(user.id)).toContainEqual(operatorEvent('mfa_disabled', user.id))
    const human = await users(['mfa-reset', user.id])
    expect(human.stdout).toMatch(/^0 second factors of \S+ \(\d{10}\) removed, and its sessions ended/)
  })

  it.runIf(profileBackend)(
    'set-role: the sessions end, role_changed is recorded, and tokens carry the role from the next login',
    async () => {
      const user = await registerUser(service.app)
      // a default account's tokens carry no role
      expect(decodeJwt(user.accessToken).claims).not.toHaveProperty('role')
      expect(decodeJwt(user.refreshToken).claims).not.toHaveProperty('role')

      const result = await users(['set-role', user.email, 'admin', '--json'])
      expect(result.code, result.stderr).toBe(0)
      expect(result.stderr).toBe('')
      const answer = JSON.parse(result.stdout)
      expect(answer).toEqual({
        id: user.id,
        email: user.email,
        email_verified: false,
        created_at: user.createdAt,
        role: 'admin',
        previous_role: 'user',
        changed: true,
        updated_at: expect.stringMatching(ISO_TIME),
        sessions_ended: 1,
        access_tokens_expire_by: expect.stringMatching(ISO_TIME),
      })
      expect(Date.parse(answer.updated_at)).toBeGreaterThanOrEqual(Date.parse(user.createdAt))
      expect(await service.stores.sessions.list(user.id, Date.now())).toEqual([])
      expectError(await refresh(user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
      expect(await events(user.id)).toContainEqual(operatorEvent('role_changed', user.id))
      expect(await service.stores.users.findById(user.id)).toMatchObject({
        role: 'admin',
        status: 'active',
        updatedAt: answer.updated_at,
      })

      // the next login's tokens carry it, and a refresh keeps it
      const again = await login(user.email, PASSWORD)
      expect(again.status, again.text).toBe(200)
      expect(decodeJwt(again.body.data.access_token).claims.role).toBe('admin')
      const refreshed = await refresh(again.body.data.refresh_token)
      expect(refreshed.status, refreshed.text).toBe(200)
      expect(decodeJwt(refreshed.body.data.access_token).claims.role).toBe('admin')
      expect(decodeJwt(refreshed.body.data.refresh_token).claims.role).toBe('admin')
      const me = await call(service.app, 'GET', '/auth/me', {
        headers: bearer(refreshed.body.data.access_token),
      })
      expect(me.status, me.text).toBe(200)

      // the role it has already: nothing changes, no event, the session stays
      const same = await users(['set-role', user.id, 'admin'])
      expect(same).toEqual({
        code: 0,
        stdout: `${user.email} (${user.id}) already has the role admin; nothing was changed.\n`,
        stderr: '',
      })
      expect(JSON.parse((await users(['set-role', user.id, 'admin', '--json'])).stdout)).toEqual({
        id: user.id,
        email: user.email,
        email_verified: false,
        created_at: user.createdAt,
        role: 'admin',
        previous_role: 'admin',
        changed: false,
        updated_at: answer.updated_at,
        sessions_ended: 0,
      })
      const later = await refresh(refreshed.body.data.refresh_token)
      expect(later.status, later.text).toBe(200)
      expect((await events(user.id)).filter((event) => event.type === 'role_changed')).toHaveLength(1)

      // back to user, human output: the tokens of the next login carry no role again
      const back = await users(['set-role', user.id, 'user'])
      expect(back.code, back.stderr).toBe(0)
      expect(back.stdout).toMatch(
        new RegExp(
          `^role: admin -> user for ${user.email} \\(${user.id}\\); 1 session ended: the new role is in the ` +
            "user's tokens from the next login\\.\\n" +
            'Access tokens already issued still read until they expire, by \\S+Z at the latest, and change nothing\\.\\n$',
        ),
      )
      expectError(await refresh(later.body.data.refresh_token), 401, MESSAGES.refreshTokenInvalid)
      const plain = await login(user.email, PASSWORD)
      expect(plain.status, plain.text).toBe(200)
      expect(decodeJwt(plain.body.data.access_token).claims).not.toHaveProperty('role')
      expect(decodeJwt(plain.body.data.refresh_token).claims).not.toHaveProperty('role')
      expect((await events(user.id)).filter((event) => event.type === 'role_changed')).toHaveLength(2)
    },
  )

  it.runIf(profileBackend)(
    'disable: no login, no refresh, every session ended; enable: the user logs in again',
    async () => {
      const user = await registerUser(service.app)
      const result = await users(['disable', user.email, '--json'])
      expect(result.code, result.stderr).toBe(0)
      const answer = JSON.parse(result.stdout)
      expect(answer).toEqual({
        id: user.id,
        email: user.email,
        email_verified: false,
        created_at: user.createdAt,
        status: 'disabled',
        previous_status: 'active',
        changed: true,
        updated_at: expect.stringMatching(ISO_TIME),
        sessions_ended: 1,
        access_tokens_expire_by: expect.stringMatching(ISO_TIME),
      })
      expect(await service.stores.sessions.list(user.id, Date.now())).toEqual([])
      expect(await events(user.id)).toContainEqual(operatorEvent('account_disabled', user.id))
      // the answers of a wrong password and of an invalid refresh token: nothing tells the account is disabled
      expectError(await refresh(user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
      expectError(await login(user.email, PASSWORD), 401, MESSAGES.invalidCredentials)
      expect(await service.stores.sessions.list(user.id, Date.now())).toEqual([])
      await service.flushAudit()
      expect(await events(user.id)).toContainEqual(
        expect.objectContaining({ type: 'login_failed', userId: user.id, reason: 'disabled' }),
      )
      expect(await service.stores.users.findById(user.id)).toMatchObject({
        status: 'disabled',
        updatedAt: answer.updated_at,
      })

      const again = await users(['disable', user.id])
      expect(again).toEqual({
        code: 0,
        stdout: `${user.email} (${user.id}) is already disabled; nothing was changed.\n`,
        stderr: '',
      })
      expect((await events(user.id)).filter((event) => event.type === 'account_disabled')).toHaveLength(1)

      const enabled = await users(['enable', user.email, '--json'])
      expect(enabled.code, enabled.stderr).toBe(0)
      const enabledAnswer = JSON.parse(enabled.stdout)
      expect(enabledAnswer).toEqual({
        id: user.id,
        email: user.email,
        email_verified: false,
        created_at: user.createdAt,
        status: 'active',
        previous_status: 'disabled',
        changed: true,
        updated_at: expect.stringMatching(ISO_TIME),
      })
      expect(Date.parse(enabledAnswer.updated_at)).toBeGreaterThanOrEqual(Date.parse(answer.updated_at))
      expect(await events(user.id)).toContainEqual(operatorEvent('account_enabled', user.id))
      const back = await login(user.email, PASSWORD)
      expect(back.status, back.text).toBe(200)
      expect((await refresh(back.body.data.refresh_token)).status).toBe(200)
      // the refresh token of before the disable stays refused
      expectError(await refresh(user.refreshToken), 401, MESSAGES.refreshTokenInvalid)

      expect(await users(['enable', user.id])).toEqual({
        code: 0,
        stdout: `${user.email} (${user.id}) is already active; nothing was changed.\n`,
        stderr: '',
      })
      expect((await events(user.id)).filter((event) => event.type === 'account_enabled')).toHaveLength(1)
    },
  )

  it.runIf(profileBackend)('disable and enable, human output', async () => {
    const user = await registerUser(service.app)
    const disabled = await users(['disable', user.id])
    expect(disabled.code, disabled.stderr).toBe(0)
    expect(disabled.stdout).toMatch(
      new RegExp(
        `^status: active -> disabled for ${user.email} \\(${user.id}\\); 1 session ended: the user can no longer ` +
          'log in or refresh\\.\\n' +
          'Access tokens already issued still read until they expire, by \\S+Z at the latest, and change nothing\\.\\n$',
      ),
    )
    expect((await users(['list', '--limit', '1000'])).stdout).toMatch(
      new RegExp(`\n${user.id}  ${user.email} +- +no +user +disabled +${user.createdAt}\n`),
    )
    expect(await users(['enable', user.email])).toEqual({
      code: 0,
      stdout: `status: disabled -> active for ${user.email} (${user.id}): the user can log in again.\n`,
      stderr: '',
    })
  })

  it('delete without --yes and stdin not a terminal: exit 2, nothing deleted', async () => {
    const user = await registerUser(service.app)
    const result = await users(['delete', user.email])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(
      /^tessera users: delete asks for confirmation on a terminal; without one, pass --yes\nUsage: tessera users/,
    )
    expect(await service.stores.users.findById(user.id)).not.toBeNull()
    expect((await refresh(user.refreshToken)).status).toBe(200)
  })

  it('R3.11 delete --yes: the account and its session are gone, its audit events kept without client addresses', async () => {
    const user: Registered = await registerUser(service.app)
    const other = await registerUser(service.app)
    // events with an address, as the service records them (in the SQL store whatever REDIS_URL says)
    const withAddress = (userId: string, at: number): SecurityEvent => ({
      at,
      type: 'login_succeeded',
      userId,
      clientAddress: '203.0.113.7',
      requestId: 'req-1',
      reason: null,
    })
    const past = Date.now() - 60_000
    await service.stores.audit.append([withAddress(user.id, past), withAddress(other.id, past)])
    // the service's own events of the registration and login reach the store within its sink's interval
    await vi.waitFor(
      async () => {
        expect(await events(user.id)).toContainEqual(
          expect.objectContaining({
            type: 'login_succeeded',
            requestId: expect.not.stringMatching(/^req-1$/),
          }),
        )
      },
      { timeout: 10_000 },
    )

    const result = await users(['delete', user.email, '--yes', '--json'])
    expect(result.code, result.stderr).toBe(0)
    const answer = JSON.parse(result.stdout)
    expect(answer).toEqual({
      id: user.id,
      email: user.email,
      email_verified: false,
      created_at: user.createdAt,
      deleted: true,
      audit_addresses_erased: expect.any(Number),
      access_tokens_expire_by: expect.any(String),
    })
    expect(answer.audit_addresses_erased).toBeGreaterThanOrEqual(3)
    // read before any request below: a refresh refused from now on is an event of the user id, with its address
    const trail = await events(user.id)
    expect(trail).toContainEqual({ ...withAddress(user.id, past), clientAddress: null })
    expect(trail.map((event) => event.type)).toEqual(
      expect.arrayContaining(['registered', 'login_succeeded']),
    )
    expect(trail.filter((event) => event.clientAddress !== null)).toEqual([])
    expect(trail.at(-1)).toEqual(operatorEvent('account_deleted', user.id))

    expectError(await login(user.email, PASSWORD), 401, MESSAGES.invalidCredentials)
    expectError(await refresh(user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expectError(
      await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) }),
      401,
      MESSAGES.accessTokenInvalid,
    )
    expect(await service.stores.users.findById(user.id)).toBeNull()
    expect(await service.stores.sessions.list(user.id, Date.now())).toEqual([])

    // nobody else's trail is touched
    expect(await events(other.id)).toContainEqual(withAddress(other.id, past))
    expect((await refresh(other.refreshToken)).status).toBe(200)

    expectFailure(await users(['show', user.email]), `no account has the e-mail ${user.email}`)
    // the e-mail can be registered again, as a new account
    const reborn = await call(service.app, 'POST', '/auth/register', {
      body: { email: user.email, password: PASSWORD },
    })
    expect(reborn.status, reborn.text).toBe(200)
  })

  it('delete, human output', async () => {
    const user = await registerUser(service.app)
    const result = await users(['delete', user.id, '-y'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(
      new RegExp(
        `^Account ${user.email} \\(${user.id}\\) deleted, with its sessions\\. Its audit events are kept until ` +
          'AUDIT_RETENTION_DAYS prunes them; the client addresses of \\d+ were erased\\.\\n' +
          'Access tokens already issued still read until they expire, by \\S+Z at the latest, and change nothing\\.\\n$',
      ),
    )
  })
})

describe('tessera users: usage and failures', () => {
  let instance: BackendInstance
  beforeAll(async () => {
    instance = await (backends[0] as (typeof backends)[number]).setup()
  })
  afterAll(() => instance?.teardown())
  const users = (args: string[], env: Record<string, string> = instance.env) =>
    runCli(['users', ...args], env)

  it('--help and help: the usage on stdout, exit 0', async () => {
    const help = await users(['--help'])
    expect(help.code).toBe(0)
    expect(help.stderr).toBe('')
    expect(help.stdout).toMatch(/^Usage: tessera users <command> \[options\]\n/)
    for (const verb of [
      'list',
      'show',
      'reset-password',
      'revoke',
      'set-role',
      'disable',
      'enable',
      'delete',
    ])
      expect(help.stdout).toContain(`\n  ${verb} `)
    expect((await users(['help'])).stdout).toBe(help.stdout)
    expect((await runCli(['--help'])).stdout).toContain('\n  users reset-password <e> ')
  })

  it('usage errors: exit 2 with the reason and the usage on stderr, before any store is opened', async () => {
    // in this process (a child process each would take a second): the same function the command runs
    const run = async (args: readonly string[]) => {
      let stdout = ''
      let stderr = ''
      const code = await runUsersCommand(args, {
        stdout: (text) => {
          stdout += text
        },
        stderr: (text) => {
          stderr += text
        },
        terminal: pipedStdin,
        clock: systemClock,
        // a database that cannot be reached: a usage error is found first
        environment: async () => ({
          ...TEST_ENV,
          ...instance.env,
          DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none',
        }),
      })
      return { code, stdout, stderr }
    }
    for (const [args, reason] of [
      [[], 'missing command'],
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['show'], 'show needs an <email|id> argument'],
      [['show', 'a@example.com', 'b@example.com'], 'unexpected argument "b@example.com"'],
      [['show', 'not-an-address'], '"not-an-address" is neither an e-mail address nor a user id (10 digits)'],
      [['show', '0123456789'], '"0123456789" is neither an e-mail address nor a user id (10 digits)'],
      [['list', 'extra'], 'unexpected argument "extra"'],
      [['list', '--limit', '0'], '--limit takes a whole number from 1 to 1000, got "0"'],
      [['list', '--limit', '1001'], '--limit takes a whole number from 1 to 1000, got "1001"'],
      [['list', '--limit', '2.5'], '--limit takes a whole number from 1 to 1000, got "2.5"'],
      // a negative value is refused for what it is, not as "argument is ambiguous"
      [['list', '--limit', '-1'], '--limit takes a whole number from 1 to 1000, got "-1"'],
      [['list', '--after', 'abc'], '--after takes a user id (10 digits), got "abc"'],
      [['list', '--after', '--json'], '--after needs a value'],
      // raw control bytes in CLI errors: a hostile argument is escaped and cut, never written as it is
      [
        ['show', '\u001b[2J\u001b[31mred\nforged line'],
        '"\\x1b[2J\\x1b[31mred\\nforged line" is neither an e-mail address nor a user id (10 digits)',
      ],
      [
        ['show', 'x'.repeat(100_000)],
        `"${'x'.repeat(80)}"… (99920 more characters) is neither an e-mail address nor a user id (10 digits)`,
      ],
      [
        ['list', '--\u001b[31m'],
        "Unknown option '--\\x1b[31m'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- \"--\\u001b[31m\"",
      ],
      [
        ['list', '--frob'],
        "Unknown option '--frob'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- \"--frob\"",
      ],
      [['show', 'a@example.com', '--limit', '3'], 'show takes no --limit'],
      [['revoke', 'a@example.com', '--yes'], 'revoke takes no --yes'],
      [['set-role', 'a@example.com'], 'set-role needs a <role> argument after the <email|id>'],
      [['set-role'], 'set-role needs an <email|id> argument'],
      [
        ['set-role', 'a@example.com', 'Admin'],
        '"Admin" is not a role name: 1 to 32 of a-z 0-9 _ - starting with a letter (user is the default)',
      ],
      [
        ['set-role', 'a@example.com', `a${'b'.repeat(32)}`],
        `"a${'b'.repeat(32)}" is not a role name: 1 to 32 of a-z 0-9 _ - starting with a letter (user is the default)`,
      ],
      [
        ['set-role', 'a@example.com', '1st'],
        '"1st" is not a role name: 1 to 32 of a-z 0-9 _ - starting with a letter (user is the default)',
      ],
      [
        ['set-role', 'a@example.com', 'admin\u001b[2J'],
        '"admin\\x1b[2J" is not a role name: 1 to 32 of a-z 0-9 _ - starting with a letter (user is the default)',
      ],
      [['set-role', 'a@example.com', 'admin', 'extra'], 'unexpected argument "extra"'],
      [['set-role', 'nobody', 'admin'], '"nobody" is neither an e-mail address nor a user id (10 digits)'],
      [['disable', 'a@example.com', 'admin'], 'unexpected argument "admin"'],
      [['enable'], 'enable needs an <email|id> argument'],
      [['disable', 'a@example.com', '--yes'], 'disable takes no --yes'],
      [['enable', 'a@example.com', '--limit', '3'], 'enable takes no --limit'],
      [['delete', 'a@example.com'], 'delete asks for confirmation on a terminal; without one, pass --yes'],
    ] as const) {
      const result = await run(args)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toBe(`tessera users: ${reason}\n${USERS_USAGE}`)
    }
    // the built command says the same
    const built = await users(['show'], {
      ...instance.env,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none',
    })
    expect(built).toEqual({
      code: 2,
      stdout: '',
      stderr: `tessera users: show needs an <email|id> argument\n${USERS_USAGE}`,
    })
  })

  it('a store that cannot be reached: exit 1, one line naming the variable', async () => {
    const result = await users(['list'], {
      ...instance.env,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none',
    })
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(
      /^tessera users: DATABASE_URL could not be opened[^\n]*ECONNREFUSED[^\n]*\n$/,
    )
  })

  it('a bad configuration: exit 1, one line naming the variable', async () => {
    const result = await users(['list'], { ...instance.env, AUTH_ARGON2_TIME_COST: 'many' })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^tessera users: AUTH_ARGON2_TIME_COST [^\n]+\n$/)
  })
})
