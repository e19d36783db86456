import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import {
  createExpiryPruner,
  type ExpiryPrunerDeps,
  PENDING_FACTOR_TTL_MS,
} from '../../src/storage/expiry-pruner.js'
import { newUserRecord } from '../../src/storage/new-user.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { StoredFactor, Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { startTestService, type TestService } from '../support/test-service.js'

const START = Date.UTC(2026, 0, 1)
const HOUR = 3_600_000
const codeKey = (address: string) => ({ address, purpose: 'login' as const, userId: null })
const ticket = (digit: string, expiresAt: number) => ({
  digest: digit.repeat(64),
  kind: 'oauth_state' as const,
  payload: 'sealed',
  expiresAt,
})

/** A TOTP factor of the account `userId`, pending, made at `createdAt`. */
const pendingFactor = (userId: string, digit: string, createdAt: number): StoredFactor => ({
  id: digit.repeat(32),
  userId,
  type: 'totp',
  name: 'Authenticator app',
  confirmed: false,
  secret: 'sealed',
  lastStep: null,
  credentialId: null,
  publicKey: null,
  counter: 0,
  backedUp: false,
  transports: [],
  createdAt,
  lastUsedAt: null,
})

/**
 * An account with two TOTP factors left pending, made at `createdAt` and `laterAt`, and one confirmed made long
 * before: the pruner removes the pending ones PENDING_FACTOR_TTL_MS after they were made, never the confirmed one.
 */
async function seedFactors(stores: Stores, createdAt: number, laterAt: number) {
  const user = newUserRecord({
    id: '1000000001',
    email: 'factors@example.com',
    passwordHash: null,
    emailVerified: true,
    createdAt: new Date(createdAt).toISOString(),
  })
  expect(await stores.users.create(user)).toBe('created')
  await stores.factors.add(pendingFactor(user.id, 'a', createdAt))
  await stores.factors.add(pendingFactor(user.id, 'b', laterAt))
  await stores.factors.add(pendingFactor(user.id, 'c', createdAt - 10 * PENDING_FACTOR_TTL_MS))
  expect(await stores.factors.confirm(user.id, 'c'.repeat(32), 1, createdAt)).toBe(true)
}

/**
 * On a store: a code, a counter window, a ticket and a pending factor that are over at START, and one of each that is
 * over an hour later (the counter's window: two hours from START - 1, its start).
 */
async function seed(stores: Stores, clock: ReturnType<typeof createFixedClock>) {
  await stores.codes.put(codeKey('over@example.com'), 'a'.repeat(64), START - 1, START - 600_000)
  await stores.codes.put(codeKey('later@example.com'), 'b'.repeat(64), START + 30 * 60_000, START)
  clock.set(START - 2 * HOUR)
  await stores.sharedCounters.increment('pruner:over', HOUR)
  clock.set(START - 1)
  await stores.sharedCounters.increment('pruner:later', HOUR)
  clock.set(START)
  await stores.tickets.put(ticket('1', START))
  await stores.tickets.put(ticket('2', START + 30 * 60_000))
  await seedFactors(stores, START - PENDING_FACTOR_TTL_MS, START - PENDING_FACTOR_TTL_MS + 30 * 60_000)
}

/** What is left of seed's rows: each prune reports what it removed, so a second one at `now` finds nothing. */
async function leftAt(stores: Stores, now: number) {
  return {
    codes: await stores.codes.prune(now),
    counters: (await stores.sharedCounters.prune?.(now)) ?? 0,
    tickets: await stores.tickets.prune(now),
    factors: await stores.factors.prunePending(now - PENDING_FACTOR_TTL_MS),
  }
}

describe('the expiry pruner', () => {
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  /** SQLite stores on a fixed clock, and the log lines written. */
  async function open() {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-pruner-'))
    cleanups.push(() => rm(dir, { recursive: true, force: true }))
    const clock = createFixedClock(START)
    const config = loadConfig(
      { NODE_ENV: 'test', DATABASE_URL: `sqlite:${dir}/app.db`, DATA_DIR: dir },
      { listens: false },
    )
    const lines: Array<Record<string, unknown>> = []
    const log = {
      info: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'info', ...fields, msg }),
      warn: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', ...fields, msg }),
    }
    const stores = await openStores(config.storage, clock, createLogger('silent'))
    cleanups.push(() => stores.close())
    return { clock, stores, lines, log }
  }

  /** A pruner of the stores every 20 ms, with `codes` in place of the stores' own when given. */
  function prunerOn(
    { stores, clock, log }: Pick<Awaited<ReturnType<typeof open>>, 'stores' | 'clock' | 'log'>,
    codes: ExpiryPrunerDeps['codes'] = stores.codes,
  ) {
    const pruner = createExpiryPruner({
      codes,
      counters: stores.sharedCounters,
      tickets: stores.tickets,
      factors: stores.factors,
      clock,
      log,
      everyMs: 20,
    })
    cleanups.push(() => pruner.close())
    return pruner
  }

  it('removes what is over at start and then every interval, and only that', async () => {
    const { clock, stores, lines, log } = await open()
    await seed(stores, clock)
    const pruner = prunerOn({ stores, clock, log })
    pruner.start()
    await vi.waitFor(() =>
      expect(lines).toEqual([
        { level: 'info', deleted: 1, msg: 'expired e-mail codes pruned' },
        { level: 'info', deleted: 1, msg: 'ended counter windows pruned' },
        { level: 'info', deleted: 1, msg: 'expired sign-in tickets pruned' },
        { level: 'info', deleted: 1, msg: 'second factors left pending pruned' },
      ]),
    )
    // the others are not over yet, at any number of prunings
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(lines).toHaveLength(4)
    expect(await leftAt(stores, START)).toEqual({ codes: 0, counters: 0, tickets: 0, factors: 0 })
    clock.advance(HOUR)
    await vi.waitFor(() => expect(lines).toHaveLength(8))
    expect(await leftAt(stores, clock.now())).toEqual({ codes: 0, counters: 0, tickets: 0, factors: 0 })
    // the confirmed factor, made long before, is never pruned
    expect((await stores.factors.list('1000000001')).map((factor) => factor.id)).toEqual(['c'.repeat(32)])
  })

  it('logs a store that fails, prunes the others, and tries again at the next interval', async () => {
    const { clock, stores, lines, log } = await open()
    await seed(stores, clock)
    let failing = true
    const pruner = prunerOn(
      { stores, clock, log },
      {
        prune: async (now) => {
          if (failing) throw new Error('SQLITE_BUSY')
          return stores.codes.prune(now)
        },
      },
    )
    await pruner.prune()
    expect(lines.map((line) => line.msg)).toEqual([
      'expired e-mail codes could not be pruned; tried again later',
      'ended counter windows pruned',
      'expired sign-in tickets pruned',
      'second factors left pending pruned',
    ])
    expect(lines[0]).toMatchObject({ level: 'warn', err: new Error('SQLITE_BUSY') })
    failing = false
    pruner.start()
    await vi.waitFor(() =>
      expect(lines.at(-1)).toEqual({ level: 'info', deleted: 1, msg: 'expired e-mail codes pruned' }),
    )
  })

  it('close waits for a pruning in progress, and no timer runs after it', async () => {
    const { clock, stores, log } = await open()
    let calls = 0
    let release = () => {}
    const pruner = prunerOn(
      { stores, clock, log },
      {
        prune: () => {
          calls++
          return new Promise<number>((resolve) => {
            release = () => resolve(0)
          })
        },
      },
    )
    pruner.start()
    let closed = false
    const closing = pruner.close().then(() => {
      closed = true
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(closed).toBe(false)
    release()
    await closing
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(calls).toBe(1)
  })
})

// docs/api.md R4.24.4 (issue 31): every minute, so that each table holds what is alive and about a minute of what
// has expired. The pruner's own schedule, not a test's interval: its timer is driven by Vitest (setInterval only, so
// that the drivers' timers and the waits run as they do), the stores' time by the service clock
describe.each(backends)('the expiry pruner on its own schedule [$name]', (backend) => {
  const MINUTE = 60_000
  let instance: Awaited<ReturnType<typeof backend.setup>> | undefined
  let stores: Stores | undefined
  let pruner: ReturnType<typeof createExpiryPruner> | undefined
  afterEach(async () => {
    vi.useRealTimers()
    await pruner?.close()
    await stores?.close()
    await instance?.teardown()
  })

  it('R4.24.4 removes what expired within a minute of its expiry, and only that', async () => {
    instance = await backend.setup()
    const clock = createFixedClock(START)
    const config = loadConfig({ NODE_ENV: 'test', ...instance.env }, { listens: false })
    const opened = await openStores(config.storage, clock, createLogger('silent'))
    stores = opened
    // a code, a counter window (SQL only: Redis expires its own) and a ticket over half a minute from START, and one
    // of each over five minutes from START
    await opened.codes.put(codeKey('soon@example.com'), 'a'.repeat(64), START + MINUTE / 2, START)
    await opened.codes.put(codeKey('later@example.com'), 'b'.repeat(64), START + 5 * MINUTE, START)
    await opened.tickets.put(ticket('1', START + MINUTE / 2))
    await opened.tickets.put(ticket('2', START + 5 * MINUTE))
    // and a factor left pending whose hour is over half a minute from START, one whose hour is over five minutes from it
    await seedFactors(
      opened,
      START + MINUTE / 2 - PENDING_FACTOR_TTL_MS,
      START + 5 * MINUTE - PENDING_FACTOR_TTL_MS,
    )
    clock.set(START - MINUTE / 2)
    await opened.sharedCounters.increment('pruner:soon', MINUTE)
    clock.set(START)
    await opened.sharedCounters.increment('pruner:later', 5 * MINUTE)
    const sqlCounters = opened.sharedCounters.prune !== undefined

    const lines: Array<Record<string, unknown>> = []
    const log = {
      info: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'info', ...fields, msg }),
      warn: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', ...fields, msg }),
    }
    /** When each pruning of the codes ended: the one at start, then the timer's. */
    const prunings: number[] = []
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    pruner = createExpiryPruner({
      codes: {
        prune: async (now) => {
          const deleted = await opened.codes.prune(now)
          prunings.push(now)
          return deleted
        },
      },
      counters: opened.sharedCounters,
      tickets: opened.tickets,
      factors: opened.factors,
      clock,
      log,
    })
    pruner.start()
    // the pruning at start, to its end (joined; a second one at START when it had ended, which finds nothing either)
    await pruner.prune()
    expect(prunings[0]).toBe(START)
    expect(lines).toEqual([])

    clock.set(START + MINUTE)
    vi.advanceTimersByTime(MINUTE)
    await vi.waitFor(() => expect(lines).toHaveLength(sqlCounters ? 4 : 3), { timeout: 10_000 })
    expect(lines).toEqual(
      expect.arrayContaining([
        { level: 'info', deleted: 1, msg: 'expired e-mail codes pruned' },
        { level: 'info', deleted: 1, msg: 'expired sign-in tickets pruned' },
        { level: 'info', deleted: 1, msg: 'second factors left pending pruned' },
        ...(sqlCounters ? [{ level: 'info', deleted: 1, msg: 'ended counter windows pruned' }] : []),
      ]),
    )
    expect(prunings.at(-1)).toBe(START + MINUTE)
    // what is alive is still there, and is what goes when it is over
    expect(await opened.codes.prune(START + 5 * MINUTE - 1)).toBe(0)
    expect(await opened.tickets.prune(START + 5 * MINUTE - 1)).toBe(0)
    expect(await opened.factors.prunePending(START + 5 * MINUTE - 1 - PENDING_FACTOR_TTL_MS)).toBe(0)
    expect(await opened.codes.prune(START + 5 * MINUTE)).toBe(1)
    expect(await opened.tickets.prune(START + 5 * MINUTE)).toBe(1)
    expect(await opened.factors.prunePending(START + 5 * MINUTE - PENDING_FACTOR_TTL_MS)).toBe(1)
    if (sqlCounters) {
      expect(await opened.sharedCounters.prune?.(START + 5 * MINUTE - 1)).toBe(0)
      expect(await opened.sharedCounters.prune?.(START + 5 * MINUTE)).toBe(1)
    }
  })
})

describe('a service that cannot send mail', () => {
  let service: TestService | null = null
  afterEach(async () => {
    await service?.close()
    service = null
  })

  // production without SMTP_URL runs no outbox sender: the pruning does not depend on it
  it('prunes the expired rows at start all the same', async () => {
    const backend = backends[0]
    if (backend === undefined) throw new Error('no backend')
    const instance = await backend.setup()
    const clock = createFixedClock(START)
    const config = loadConfig({ NODE_ENV: 'test', ...instance.env }, { listens: false })
    const stores = await openStores(config.storage, clock, createLogger('silent'))
    try {
      await seed(stores, clock)
    } finally {
      await stores.close()
    }
    service = await startTestService(backend, {
      instance,
      clock,
      env: { NODE_ENV: 'production', SMTP_URL: '' },
    })
    const owned = service
    const close = owned.close
    owned.close = async () => {
      await close()
      await instance.teardown()
    }
    await vi.waitFor(() =>
      expect(owned.logs().map((line) => line.msg)).toEqual(
        expect.arrayContaining([
          'no mail can be sent (production without SMTP_URL): sending codes answers 503, and queued mail waits for SMTP_URL',
          'expired e-mail codes pruned',
          'expired sign-in tickets pruned',
          'second factors left pending pruned',
        ]),
      ),
    )
  })
})
