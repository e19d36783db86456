import { mkdtemp, rm } from 'node:fs/promises'
import { Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { loadBetterSqlite3 } from '../../src/storage/sqlite/better-sqlite3.js'
import { forwardedPost } from '../support/forwarded-post.js'
import { PASSWORD, uniqueEmail } from '../support/http.js'
import { type RunningService, startProcess } from '../support/process.js'

/** The flood: this many client addresses (through the trusted proxy's X-Forwarded-For), for a minute. */
const ADDRESSES = 500
const FLOOD_MS = 60_000
/** Rounds over every address, each sending one request of each kind: 8 stays under each address's rate limits. */
const ROUNDS = 8
/** docs/api.md R6.3.4: per flood kind and clock minute, 100 rows of their own and one events_omitted summary. */
const ROWS_PER_KIND_AND_MINUTE = 100 + 1
const FLOOD_KINDS = ['unknown_email', 'invalid', 'replayed'] as const

/** A refresh token's shape with a signature no secret made. */
const madeUpToken = (i: number) =>
  `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(
    JSON.stringify({
      sub: String(1_000_000_000 + i),
      token_type: 'Refresh',
      exp: 4_102_444_800,
      jti: `${i}`,
    }),
  ).toString('base64url')}.${Buffer.from(`forged-${i}`).toString('base64url')}`

// issue 18: the audit trail grew by one row per failed login with an unknown e-mail and per replay of a replaced
// refresh token, bounded only by each address's rate limit. docs/api.md R6.3.4 bounds it across all addresses.
describe('the audit trail under a flood from 500 addresses', () => {
  let dir: string
  let service: RunningService
  let base: URL
  const agent = new Agent({ keepAlive: true, maxSockets: 32 })
  const database = () => join(dir, 'app.db')

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-audit-flood-'))
    service = await startProcess({
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: 'audit-flood-0123456789-abcdefghijklmnopqrstuvwxyz',
      HOST: '127.0.0.1',
      TRUST_PROXY: '127.0.0.1',
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${database()}`,
      // the limits of production: only they bounded the trail before
      RATE_LIMIT_PER_MINUTE: '30',
    })
    base = new URL(service.url)
  })
  const post = (path: string, body: unknown, address: string) =>
    forwardedPost(agent, base.port, path, body, address)
  /** Registers `email` from `address`; resolves with its refresh token. */
  const register = async (email: string, address: string): Promise<string> => {
    const answer = await post('/auth/register', { email, password: PASSWORD }, address)
    expect(answer.status).toBe(200)
    return JSON.parse(answer.body).data.refresh_token
  }
  afterAll(async () => {
    agent.destroy()
    await service?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const rows = (): Array<{
    event: string
    user_id: string | null
    reason: string | null
    omitted: number | null
  }> => {
    const BetterSqlite3 = loadBetterSqlite3()
    const db = new BetterSqlite3(database(), { readonly: true })
    try {
      return db.prepare('SELECT event, user_id, reason, omitted FROM audit_events ORDER BY id').all() as never
    } finally {
      db.close()
    }
  }

  it('R6.3.4 unknown e-mails, made-up refresh tokens and replays of a replaced token grow it by at most the bound, while a real failed login is kept', async () => {
    // the attacker's own account, and the token it keeps after refreshing it once
    const replaced = await register(uniqueEmail(), '203.0.113.9')
    expect((await post('/auth/refresh', { refresh_token: replaced }, '203.0.113.9')).status).toBe(200)
    // a real user, who mistypes a password during the flood
    const user = uniqueEmail()
    await register(user, '198.18.0.1')
    // the two registrations and the refresh are not the flood's: counted once they are in the table
    const before = await vi.waitFor(
      () => {
        const existing = rows()
        expect(
          existing.filter((row) => row.event === 'registered' || row.event === 'refresh_succeeded'),
        ).toHaveLength(3)
        return existing.length
      },
      { timeout: 10_000 },
    )

    const started = Date.now()
    const statuses: Record<string, Record<number, number>> = {}
    const count = (kind: string, status: number) => {
      const kindCounts = statuses[kind] ?? {}
      kindCounts[status] = (kindCounts[status] ?? 0) + 1
      statuses[kind] = kindCounts
    }
    let userFailed = false
    for (let round = 0; round < ROUNDS; round++) {
      const roundEnds = started + ((round + 1) * FLOOD_MS) / ROUNDS
      for (let first = 0; first < ADDRESSES; first += 25) {
        await Promise.all(
          Array.from({ length: 25 }, async (_, offset) => {
            const i = first + offset
            const address = `10.${Math.floor(i / 250)}.${i % 250}.1`
            const [login, invalid, replay] = await Promise.all([
              post('/auth/login', { email: uniqueEmail(), password: PASSWORD }, address),
              post('/auth/refresh', { refresh_token: madeUpToken(round * ADDRESSES + i) }, address),
              post('/auth/refresh', { refresh_token: replaced }, address),
            ])
            count('unknown_email', login.status)
            count('invalid', invalid.status)
            count('replay', replay.status)
          }),
        )
      }
      if (round === ROUNDS / 2) {
        const wrong = await post('/auth/login', { email: user, password: 'not the password' }, '198.18.0.1')
        expect(wrong.status).toBe(401)
        userFailed = true
      }
      await sleep(Math.max(0, roundEnds - Date.now()))
    }
    const ended = Date.now()
    expect(userFailed).toBe(true)
    // every request of the flood was answered as a failure of its kind, none refused by a rate limit
    const sent = ROUNDS * ADDRESSES
    expect(statuses).toEqual({ unknown_email: { 401: sent }, invalid: { 401: sent }, replay: { 401: sent } })

    // SIGTERM: the sink writes what it holds, the summaries of the minute in progress included
    expect(await service.stop()).toBe(0)
    const after = rows().slice(before)
    const minutes = Math.floor(ended / 60_000) - Math.floor(started / 60_000) + 1
    // the documented bound: per kind and minute 101 rows, plus the first reuse of the token and the user's failure
    expect(after.length).toBeLessThanOrEqual(FLOOD_KINDS.length * ROWS_PER_KIND_AND_MINUTE * minutes + 2)
    const userFailure = after.filter((row) => row.event === 'login_failed' && row.reason === 'wrong_password')
    expect(userFailure, 'the real user failed login is recorded, with the account').toHaveLength(1)
    expect(userFailure[0]?.user_id).toMatch(/^[1-9]\d{9}$/)
    expect(after.filter((row) => row.event === 'refresh_refused' && row.reason === 'reused')).toHaveLength(1)

    console.log(
      `audit flood: ${3 * sent} flood requests from ${ADDRESSES} addresses in ${ended - started} ms over ${minutes} clock minute(s): ${after.length} rows added`,
    )
    // nothing is lost from view: the rows kept and the summaries' counts add up to every event of each kind
    const expected = { unknown_email: sent, invalid: sent, replayed: sent - 1 }
    for (const kind of FLOOD_KINDS) {
      const kept = after.filter((row) => row.reason === kind && row.event !== 'events_omitted').length
      const omitted = after
        .filter((row) => row.reason === kind && row.event === 'events_omitted')
        .reduce((sum, row) => sum + Number(row.omitted), 0)
      expect(kept, kind).toBeLessThanOrEqual(100 * minutes)
      expect(kept + omitted, kind).toBe(expected[kind])
    }
  }, 180_000)
})
