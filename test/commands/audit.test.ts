import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateUserId } from '../../src/auth/user-id.js'
import { systemClock } from '../../src/clock.js'
import { parseSince } from '../../src/commands/audit.js'
import { loadConfig } from '../../src/config.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { newUserRecord } from '../../src/storage/new-user.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores } from '../../src/storage/stores.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { runCli } from '../support/process.js'

const DAY = 86_400_000
/** Each test runs the built CLI a few times: a second or more each on a busy machine. */
const CLI_TIMEOUT = 90_000

/** The trail is in the SQL database whatever REDIS_URL says, and the command opens no Redis: one run per engine. */
const sqlBackends = backends.filter((backend) => !backend.redis)

/** `tessera audit` as the built CLI runs it (npm run build), on every SQL engine. */
describe.each(sqlBackends)('tessera audit [$name]', (backend) => {
  let instance: BackendInstance
  let stores: Stores
  const user = { id: generateUserId(), email: `audit-${Date.now()}@example.com` }
  const deletedId = generateUserId()
  const now = Date.now()
  const event = (overrides: Partial<SecurityEvent>): SecurityEvent => ({
    at: now,
    type: 'login_succeeded',
    userId: user.id,
    clientAddress: '203.0.113.7',
    requestId: 'req-1',
    reason: null,
    ...overrides,
  })
  const audit = (...args: string[]) => runCli(['audit', ...args], instance.env)

  beforeAll(async () => {
    instance = await backend.setup()
    stores = await openStores(loadConfig(instance.env).storage, systemClock)
    await stores.users.create(
      newUserRecord({
        id: user.id,
        email: user.email,
        passwordHash: '$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$aGFzaA',
        emailVerified: false,
        createdAt: new Date(now - 10 * DAY).toISOString(),
      }),
    )
    await stores.audit.append([
      event({ at: now - 10 * DAY, type: 'registered', requestId: 'req-a' }),
      event({ at: now - 3 * DAY, type: 'login_failed', reason: 'wrong_password', requestId: 'req-b' }),
      event({ at: now - 2 * 3_600_000, requestId: 'req-c' }),
      event({ at: now - 3_600_000, type: 'refresh_refused', reason: 'reused', requestId: 'req-d' }),
      event({
        userId: deletedId,
        type: 'account_deleted',
        reason: 'operator',
        clientAddress: null,
        requestId: null,
      }),
      event({ userId: generateUserId(), requestId: 'someone-else' }),
    ])
  })
  afterAll(async () => {
    await stores?.close()
    await instance?.teardown()
  })

  it(
    'R6.3.7 lists the user’s events oldest first, by e-mail or id, as a table',
    async () => {
      const byEmail = await audit('--user', user.email.toUpperCase())
      expect(byEmail).toMatchObject({ code: 0, stderr: '' })
      const lines = byEmail.stdout.trimEnd().split('\n')
      expect(lines[0]).toBe(`user ${user.id}`)
      expect(lines[1]).toMatch(/^TIME +EVENT +REASON +ACTOR +CLIENT +REQUEST$/)
      expect(lines.slice(2).map((line) => line.split(/ +/))).toEqual([
        [new Date(now - 10 * DAY).toISOString(), 'registered', '-', '-', '203.0.113.7', 'req-a'],
        [
          new Date(now - 3 * DAY).toISOString(),
          'login_failed',
          'wrong_password',
          '-',
          '203.0.113.7',
          'req-b',
        ],
        [new Date(now - 2 * 3_600_000).toISOString(), 'login_succeeded', '-', '-', '203.0.113.7', 'req-c'],
        [new Date(now - 3_600_000).toISOString(), 'refresh_refused', 'reused', '-', '203.0.113.7', 'req-d'],
      ])
      expect((await audit('--user', user.id)).stdout).toBe(byEmail.stdout)
    },
    CLI_TIMEOUT,
  )

  it(
    'R6.3.7 --json, here with --since as a duration',
    async () => {
      const json = await audit('--user', user.id, '--json', '--since', '4d')
      expect(json).toMatchObject({ code: 0, stderr: '' })
      expect(JSON.parse(json.stdout)).toEqual({
        user_id: user.id,
        events: [
          {
            time: new Date(now - 3 * DAY).toISOString(),
            event: 'login_failed',
            reason: 'wrong_password',
            client_address: '203.0.113.7',
            request_id: 'req-b',
            actor: null,
          },
          {
            time: new Date(now - 2 * 3_600_000).toISOString(),
            event: 'login_succeeded',
            reason: null,
            client_address: '203.0.113.7',
            request_id: 'req-c',
            actor: null,
          },
          {
            time: new Date(now - 3_600_000).toISOString(),
            event: 'refresh_refused',
            reason: 'reused',
            client_address: '203.0.113.7',
            request_id: 'req-d',
            actor: null,
          },
        ],
      })
    },
    CLI_TIMEOUT,
  )

  it(
    'R6.3.7 --since as an ISO time or a shorter duration; --limit keeps the latest',
    async () => {
      const requestIds = async (...args: string[]) =>
        JSON.parse((await audit('--user', user.id, '--json', ...args)).stdout).events.map(
          (e: { request_id: string }) => e.request_id,
        )
      expect(await requestIds('--since', '90m')).toEqual(['req-d'])
      expect(await requestIds('--since', new Date(now - 2 * 3_600_000).toISOString())).toEqual([
        'req-c',
        'req-d',
      ])
      expect(await requestIds('--limit', '2')).toEqual(['req-c', 'req-d'])
    },
    CLI_TIMEOUT,
  )

  it(
    'R6.3.7 no events since then: says so, exit 0',
    async () => {
      expect((await audit('--user', user.id, '--since', '2999-01-01')).stdout).toBe(
        `no audit events for user ${user.id}\n`,
      )
    },
    CLI_TIMEOUT,
  )

  it(
    'R6.3.6 a deleted account is found by its id (its events outlive it)',
    async () => {
      const result = await audit('--user', deletedId, '--json')
      expect(result.code).toBe(0)
      expect(JSON.parse(result.stdout).events).toEqual([
        expect.objectContaining({ event: 'account_deleted', reason: 'operator', client_address: null }),
      ])
    },
    CLI_TIMEOUT,
  )

  it(
    'R6.3.7 an admin’s act shows its actor, in the table and with --json',
    async () => {
      const target = generateUserId()
      const admin = generateUserId()
      await stores.audit.append([
        event({
          userId: target,
          type: 'account_disabled',
          reason: 'admin',
          actor: admin,
          requestId: 'req-admin',
        }),
      ])
      const table = await audit('--user', target)
      expect(table.stdout.trimEnd().split('\n')[2]?.split(/ +/)).toEqual([
        new Date(now).toISOString(),
        'account_disabled',
        'admin',
        admin,
        '203.0.113.7',
        'req-admin',
      ])
      expect(JSON.parse((await audit('--user', target, '--json')).stdout).events).toEqual([
        {
          time: new Date(now).toISOString(),
          event: 'account_disabled',
          reason: 'admin',
          client_address: '203.0.113.7',
          request_id: 'req-admin',
          actor: admin,
        },
      ])
    },
    CLI_TIMEOUT,
  )

  it(
    'R6.3.7 an unknown user: exit 1, one line',
    async () => {
      expect(await audit('--user', 'nobody@example.com')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'tessera audit: no account has the e-mail nobody@example.com (a deleted one: give its id)\n',
      })
      expect(await audit('--user', '1000000001')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'tessera audit: no account and no audit event has the user id 1000000001\n',
      })
    },
    CLI_TIMEOUT,
  )
})

describe('tessera audit --help and --since', () => {
  it(
    'R6.3.7 bad input: exit 2, one line, before any store is opened',
    async () => {
      const cases: Array<[string[], string]> = [
        [['--user', '1234567890', '--since', 'yesterday'], '--since must be an ISO 8601 date or time'],
        [['--user', '1234567890', '--since', '2026-02-30'], '--since must be an ISO 8601 date or time'],
        [['--user', '1234567890', '--limit', '0'], '--limit must be an integer from 1 to 10000, got "0"'],
        [['--user', 'not an e-mail'], '--user "not an e-mail" is neither an e-mail address nor a user id'],
        [[], '--user <email|id> is required'],
        [['--user', '1234567890', 'extra'], 'unexpected argument "extra"'],
        [['--user', '1234567890', '--nope'], "Unknown option '--nope'"],
      ]
      for (const [args, message] of cases) {
        const result = await runCli(['audit', ...args], { DATABASE_URL: 'postgres://nowhere.invalid/x' })
        expect(result.code, args.join(' ')).toBe(2)
        expect(result.stdout).toBe('')
        expect(result.stderr.startsWith(`tessera audit: ${message}`), result.stderr).toBe(true)
        expect(result.stderr.split('\n')).toHaveLength(2)
      }
    },
    CLI_TIMEOUT,
  )

  it(
    'R6.3.7 --help shows the usage',
    async () => {
      const result = await runCli(['audit', '--help'])
      expect(result).toMatchObject({ code: 0, stderr: '' })
      expect(result.stdout).toMatch(/^Usage: tessera audit --user <email\|id>/)
    },
    CLI_TIMEOUT,
  )

  it('R6.3.7 parses dates (UTC unless an offset is named), times and durations', () => {
    const now = Date.UTC(2026, 10, 25, 12, 0, 0)
    expect(parseSince('2026-11-01', now)).toBe(Date.UTC(2026, 10, 1))
    expect(parseSince('2026-11-01T08:30', now)).toBe(Date.UTC(2026, 10, 1, 8, 30))
    expect(parseSince('2026-11-01T08:30:15.5Z', now)).toBe(Date.UTC(2026, 10, 1, 8, 30, 15, 500))
    expect(parseSince('2026-11-01T08:30+02:00', now)).toBe(Date.UTC(2026, 10, 1, 6, 30))
    expect(parseSince('30m', now)).toBe(now - 30 * 60_000)
    expect(parseSince('12h', now)).toBe(now - 12 * 3_600_000)
    expect(parseSince('7d', now)).toBe(now - 7 * DAY)
    expect(parseSince('2w', now)).toBe(now - 14 * DAY)
    for (const bad of [
      '',
      '7',
      'd',
      '7y',
      '-7d',
      '2026-13-01',
      '2026-11-01T25:00',
      '2026-11-01 08:30',
      'now',
    ]) {
      expect(() => parseSince(bad, now), bad).toThrow(/^--since must be/)
    }
  })
})
