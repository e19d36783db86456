import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type AuditSink, type AuditSinkSettings, createAuditSink } from '../../src/audit/audit-sink.js'
import { generateUserId } from '../../src/auth/user-id.js'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { StorageError } from '../../src/errors.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { openDatabase, openStores } from '../../src/storage/open-stores.js'
import type { AuditStore, Stores } from '../../src/storage/stores.js'
import { type BackendInstance, backends } from '../support/backends.js'

/** Events reach the store within the sink's interval, or its retry (a second) after a failure. */
const WAIT = { timeout: 10_000 }

/** The batching and failure handling of the sink, over a real SQLite audit store (the logic is the same on all). */
const sqlite = backends.find((backend) => backend.name === 'sqlite')
if (sqlite === undefined) throw new Error('the sqlite backend is always available')

/** Every line the sink logs, with its level. */
function recordingLog() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = []
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, fields, message })
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } }
}

describe('createAuditSink', () => {
  let instance: BackendInstance
  let stores: Stores
  /** The store's append, observed (batch sizes) and failing while `failing` is set. */
  let batches: number[]
  let failing: boolean
  let store: AuditStore
  const sinks: AuditSink[] = []

  beforeEach(async () => {
    instance = await sqlite.setup()
    stores = await openStores(loadConfig(instance.env).storage, systemClock)
    batches = []
    failing = false
    store = {
      ...stores.audit,
      append: async (events) => {
        if (failing) throw new StorageError('audit.append failed', { cause: new Error('disk I/O error') })
        await stores.audit.append(events)
        batches.push(events.length)
      },
    }
  })
  afterEach(async () => {
    for (const sink of sinks.splice(0)) await sink.close()
    await stores.close()
    await instance.teardown()
  })

  const sinkWith = (settings: Partial<AuditSinkSettings>, options: { retentionMs?: number } = {}) => {
    const { lines, log } = recordingLog()
    const sink = createAuditSink({
      store,
      log,
      retentionMs: options.retentionMs ?? 86_400_000,
      clock: systemClock,
      settings,
    })
    sinks.push(sink)
    return { sink, lines }
  }
  const userId = generateUserId()
  let serial = 0
  const event = (overrides: Partial<SecurityEvent> = {}): SecurityEvent => ({
    at: Date.now(),
    type: 'login_succeeded',
    userId,
    clientAddress: '192.0.2.1',
    requestId: `req-${serial++}`,
    reason: null,
    ...overrides,
  })
  const stored = () => stores.audit.list({ userId })

  it('R6.3.3 a full batch is written at once, the rest after the interval, each batch one append', async () => {
    const { sink } = sinkWith({ flushIntervalMs: 60_000, maxBatch: 200 })
    const events = Array.from({ length: 450 }, () => event())
    for (const e of events) sink.record(e)
    await vi.waitFor(() => expect(batches).toEqual([200, 200]), WAIT)
    expect(sink.stats()).toMatchObject({ written: 400, pending: 50, dropped: 0 })
    // the interval (a minute here) has not passed: flush writes the rest
    await sink.flush()
    expect(batches).toEqual([200, 200, 50])
    expect((await stored()).map((e) => e.requestId)).toEqual(events.map((e) => e.requestId))
  })

  it("R6.3.3 without a batch size of its own, the sink's batches are the store's (AuditStore.batchRows)", async () => {
    store = { ...store, batchRows: 7 }
    const { sink } = sinkWith({ flushIntervalMs: 60_000 })
    for (let i = 0; i < 16; i++) sink.record(event())
    await vi.waitFor(() => expect(batches).toEqual([7, 7]), WAIT)
    await sink.flush()
    expect(batches).toEqual([7, 7, 2])
  })

  it('R6.3.3 events wait at most the interval: a few are written together, in one batch', async () => {
    const { sink } = sinkWith({ flushIntervalMs: 20 })
    sink.record(event())
    sink.record(event())
    sink.record(event())
    expect(batches).toEqual([])
    await vi.waitFor(() => expect(batches).toEqual([3]), WAIT)
    expect(sink.stats()).toMatchObject({ written: 3, pending: 0 })
  })

  it('R6.3.3 record returns at once whatever the store does; a failing store is retried, logged once, bounded', async () => {
    const { sink, lines } = sinkWith({ flushIntervalMs: 10, retryMs: 30, maxPending: 100, maxBatch: 40 })
    failing = true
    const events = Array.from({ length: 150 }, () => event())
    for (const e of events) sink.record(e)
    // the first 100 are held, the last 50 dropped and counted
    expect(sink.stats()).toMatchObject({ pending: 100, dropped: 50, written: 0 })
    // several attempts fail, and one line says so
    await new Promise((resolve) => setTimeout(resolve, 200))
    const errors = lines.filter((line) => line.level === 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({
      message: 'audit events could not be written: kept in memory and tried again',
      fields: { pending: 100, dropped: 50 },
    })
    expect(batches).toEqual([])
    failing = false
    await vi.waitFor(() => expect(sink.stats()).toMatchObject({ pending: 0, written: 100 }), WAIT)
    // the oldest were kept, in order
    expect((await stored()).map((e) => e.requestId)).toEqual(events.slice(0, 100).map((e) => e.requestId))
    expect(
      lines.find((line) => line.level === 'info' && line.message.startsWith('the audit store answers')),
    ).toMatchObject({
      fields: { dropped: 50 },
    })
  })

  it('R6.3.3 close writes what is pending; with the store still failing it says how many were lost', async () => {
    const first = sinkWith({ flushIntervalMs: 60_000 })
    first.sink.record(event())
    first.sink.record(event())
    await first.sink.close()
    expect(batches).toEqual([2])
    // after close, events are logged only
    first.sink.record(event())
    expect(first.sink.stats()).toMatchObject({ written: 2, pending: 0 })

    const second = sinkWith({ flushIntervalMs: 60_000 })
    failing = true
    second.sink.record(event())
    await second.sink.close()
    expect(second.sink.stats()).toMatchObject({ written: 0, pending: 0, dropped: 1 })
    expect(second.lines.filter((line) => line.level === 'error').map((line) => line.fields.lost)).toContain(1)
  })

  it('R6.3.2 logs every event but login_failed at info, with its request id; no store keeps no trail', async () => {
    const { lines, log } = recordingLog()
    const sink = createAuditSink({ store: null, log, retentionMs: 0, clock: systemClock })
    sinks.push(sink)
    sink.record(event({ type: 'logout', requestId: 'req-a' }))
    sink.record(event({ type: 'login_failed', reason: 'wrong_password' }))
    sink.record(event({ type: 'refresh_refused', reason: 'reused', requestId: 'req-b' }))
    await sink.close()
    expect(lines).toEqual([
      {
        level: 'info',
        message: 'security event',
        fields: { event: 'logout', userId, clientAddress: '192.0.2.1', reqId: 'req-a' },
      },
      {
        level: 'info',
        message: 'security event',
        fields: {
          event: 'refresh_refused',
          userId,
          clientAddress: '192.0.2.1',
          reqId: 'req-b',
          reason: 'reused',
        },
      },
    ])
    expect(batches).toEqual([])
    expect(await stored()).toEqual([])
  })

  it('R6.3.4 of each flood kind, the first event of each address is kept, at most floodRowsPerWindow a window', async () => {
    let clock = 120 * 60_000 + 5
    const { lines, log } = recordingLog()
    const appended: SecurityEvent[] = []
    const sink = createAuditSink({
      store: { ...store, append: async (events) => void appended.push(...events) },
      log,
      retentionMs: 86_400_000,
      clock: { now: () => clock },
      settings: { flushIntervalMs: 60_000, floodRowsPerWindow: 3 },
    })
    sinks.push(sink)
    const flood = (reason: 'unknown_email' | 'throttled' | 'invalid' | 'replayed', address: string) =>
      event({
        at: clock,
        type: reason === 'invalid' || reason === 'replayed' ? 'refresh_refused' : 'login_failed',
        reason,
        userId: reason === 'replayed' ? userId : null,
        clientAddress: address,
      })
    // 10 addresses × 2 events of each kind: 3 kept per kind (the first of the first 3 addresses), 17 left out
    for (const reason of ['unknown_email', 'throttled', 'invalid', 'replayed'] as const) {
      for (let i = 0; i < 10; i++) {
        sink.record(flood(reason, `198.51.100.${i}`))
        sink.record(flood(reason, `198.51.100.${i}`))
      }
    }
    // every other event is kept, however many
    for (let i = 0; i < 20; i++) {
      sink.record(
        event({ at: clock, type: 'login_failed', reason: 'wrong_password', clientAddress: `203.0.113.${i}` }),
      )
      sink.record(
        event({ at: clock, type: 'refresh_refused', reason: 'reused', clientAddress: '203.0.113.1' }),
      )
      sink.record(event({ at: clock, type: 'refresh_succeeded', clientAddress: '203.0.113.1' }))
    }
    expect(sink.stats()).toMatchObject({ floodOmitted: 4 * 17 })
    await sink.flush()
    const kept = (reason: string) =>
      appended.filter((e) => e.reason === reason && e.type !== 'events_omitted')
    for (const reason of ['unknown_email', 'throttled', 'invalid', 'replayed']) {
      expect(kept(reason).map((e) => e.clientAddress)).toEqual([
        '198.51.100.0',
        '198.51.100.1',
        '198.51.100.2',
      ])
    }
    expect(kept('wrong_password')).toHaveLength(20)
    expect(kept('reused')).toHaveLength(20)
    expect(appended.filter((e) => e.type === 'refresh_succeeded')).toHaveLength(20)
    expect(appended.filter((e) => e.type === 'events_omitted')).toEqual([])

    // the next minute's first event ends the window: one summary per kind, at the minute's start, with its count
    clock += 60_000
    sink.record(flood('invalid', '198.51.100.0'))
    await sink.flush()
    const minute = 120 * 60_000
    expect(appended.filter((e) => e.type === 'events_omitted')).toEqual(
      ['unknown_email', 'throttled', 'invalid', 'replayed'].map((reason) => ({
        at: minute,
        type: 'events_omitted',
        userId: null,
        clientAddress: null,
        requestId: null,
        reason,
        omitted: 17,
      })),
    )
    // in the new window the address is kept again
    expect(appended.at(-1)).toMatchObject({ reason: 'invalid', clientAddress: '198.51.100.0', at: clock })
    expect(lines.filter((line) => line.message.includes('flood bound')).map((line) => line.fields)).toEqual(
      ['unknown_email', 'throttled', 'invalid', 'replayed'].map((reason) => ({
        event: 'events_omitted',
        reason,
        omitted: 17,
        minuteStart: minute,
      })),
    )
  })

  it('R6.3.4 a window that left events out is summed up when it ends, with no event after it, and at close', async () => {
    const { sink } = sinkWith({ flushIntervalMs: 10, floodWindowMs: 300, floodRowsPerWindow: 1 })
    /** Events of one moment (so of one window): the first is kept, the others left out. */
    const throttled = (address: string, count: number) => {
      const at = Date.now()
      for (let i = 0; i < count; i++) {
        sink.record(
          event({ at, type: 'login_failed', reason: 'throttled', userId: null, clientAddress: address }),
        )
      }
    }
    /** The summaries in the table (they name no user, so they are read by their type). */
    const summaries = async () => {
      const database = await openDatabase(loadConfig(instance.env).storage, { warn() {}, info() {} })
      try {
        const { rows } = await database.run(
          "SELECT event, reason, omitted FROM audit_events WHERE event = 'events_omitted' ORDER BY id",
          [],
        )
        return rows
      } finally {
        await database.close()
      }
    }
    throttled('192.0.2.1', 4)
    await vi.waitFor(
      async () =>
        expect(await summaries()).toEqual([{ event: 'events_omitted', reason: 'throttled', omitted: 3 }]),
      WAIT,
    )
    // a window in progress at close is summed up then
    throttled('192.0.2.2', 3)
    await sink.close()
    expect(await summaries()).toEqual([
      { event: 'events_omitted', reason: 'throttled', omitted: 3 },
      { event: 'events_omitted', reason: 'throttled', omitted: 2 },
    ])
  })

  it('R6.3.5 prunes the events older than the retention once started', async () => {
    const now = Date.now()
    await stores.audit.append([
      event({ at: now - 3 * 86_400_000, requestId: 'old' }),
      event({ at: now - 2 * 86_400_000 + 60_000, requestId: 'recent' }),
    ])
    const { sink, lines } = sinkWith({}, { retentionMs: 2 * 86_400_000 })
    // nothing is pruned until the sink is started (Service.start, once the port is open)
    await sink.flush()
    expect((await stored()).map((e) => e.requestId)).toEqual(['old', 'recent'])
    sink.start()
    await vi.waitFor(
      () =>
        expect(lines.find((line) => line.message === 'old audit events pruned')?.fields).toEqual({
          deleted: 1,
        }),
      WAIT,
    )
    expect((await stored()).map((e) => e.requestId)).toEqual(['recent'])
    expect(await sink.prune()).toBe(0)
  })
})
