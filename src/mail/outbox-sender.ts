import { randomBytes } from 'node:crypto'
import type { OutboxMessage, OutboxStore } from '../storage/stores.js'
import type { MailTransport } from './mail-transport.js'
import { createOutboxDelivery, type OutboxDeliveryDeps } from './outbox-delivery.js'
import { createStoreFailureLog } from './store-failure-log.js'

export interface OutboxSenderSettings {
  /** How often the outbox is looked at when nothing wakes the sender. */
  pollIntervalMs: number
  /** The most messages claimed at once. */
  maxBatch: number
  /** A batch is made small enough for its lease to be about this long (but always one message). */
  leaseTargetMs: number
  /** The lease's time beyond the sends: the store calls around them. */
  leaseMarginMs: number
  /** While the store fails: at most one log line per this time. */
  failureLogEveryMs: number
  /** How long close() lets a send in progress finish before it closes the connection under it. */
  closeGraceMs: number
}

const OUTBOX_SENDER_DEFAULTS: OutboxSenderSettings = {
  pollIntervalMs: 1_000,
  maxBatch: 10,
  // a process that dies holding a batch delays it by its lease: with the margin, 20 s at most while a send may take
  // 15 s (MAIL_SEND_TIMEOUT_SECONDS up to 5); beyond, a batch is one message, leased for its one send
  leaseTargetMs: 15_000,
  leaseMarginMs: 5_000,
  failureLogEveryMs: 60_000,
  closeGraceMs: 5_000,
}

export interface OutboxSenderDeps extends Omit<OutboxDeliveryDeps, 'storeFailures' | 'random' | 'transport'> {
  outbox: Pick<OutboxStore, 'claim' | 'remove' | 'failed' | 'release'>
  transport: MailTransport
  /** The jitter of the retries: [0, 1). */
  random?: () => number
  settings?: Partial<OutboxSenderSettings>
}

/** Delivers the outbox in the background of a service process. */
export interface OutboxSender {
  /** Starts polling the outbox. */
  start(): void
  /** A message was queued by this process: the outbox is looked at now rather than at the next poll. */
  wake(): void
  /** Delivers what is due now, in one batch after another until none is full; resolves when done. For tests and tools. */
  deliverDue(): Promise<void>
  /** Stops polling, finishes the send in hand (or abandons it after a grace), releases the rest, closes the transport. */
  close(): Promise<void>
}

/**
 * The outbox sender (docs/api.md §6.4). Every process runs one; the store hands each message to one claimant at a
 * time, so several processes share the work and none sends what another holds. A pass claims a small batch under a
 * lease long enough for its sends (each bounded by the transport), sends them one after another and settles each
 * (removed when delivered or given up; due again later with backoff when it failed); what it cannot try before the
 * lease runs short it releases. A message is removed only after the server accepted it, so delivery is at least once;
 * twice only when the process dies (or the store fails) between the acceptance and the removal, and then with the same
 * Message-ID. Nothing here throws into the process: a store that fails is logged and tried again at the next pass.
 */
export function createOutboxSender(deps: OutboxSenderDeps): OutboxSender {
  const { outbox, transport, clock, log } = deps
  const settings = { ...OUTBOX_SENDER_DEFAULTS, ...deps.settings }
  const sendMs = transport.maxSendMs
  const batchSize = Math.max(1, Math.min(settings.maxBatch, Math.floor(settings.leaseTargetMs / sendMs)))
  const leaseMs = batchSize * sendMs + settings.leaseMarginMs
  let started = false
  let closing = false
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> | null = null
  let wokenWhileRunning = false

  const storeFailures = createStoreFailureLog(log, clock, settings.failureLogEveryMs)
  const delivery = createOutboxDelivery({ ...deps, storeFailures, random: deps.random ?? Math.random })

  /**
   * One batch: claimed, each message sent and settled, the rest released. Resolves true when more may be due now: the
   * batch was full and each of its messages was dealt with (one given back would only be claimed again at once).
   */
  const pass = async (): Promise<boolean> => {
    await delivery.settleLeftovers()
    const claimant = randomBytes(16).toString('hex')
    const claimedAt = clock.now()
    const leaseUntil = claimedAt + leaseMs
    let batch: OutboxMessage[]
    try {
      batch = await outbox.claim(claimant, claimedAt, leaseUntil, batchSize)
    } catch (error) {
      storeFailures.failed('outbox.claim', error)
      return false
    }
    storeFailures.answered('outbox.claim')
    let dealtWithAll = true
    for (const [index, message] of batch.entries()) {
      // a send begun now might end after the lease, when another process may claim the message and send it too (the
      // lease was sized for the first one)
      if (closing || (index > 0 && clock.now() + sendMs + settings.leaseMarginMs > leaseUntil)) {
        await delivery.release(batch.slice(index), claimant)
        return !closing
      }
      try {
        if (!(await delivery.deliver(message, claimant))) dealtWithAll = false
      } catch (error) {
        // nothing above throws by design; should it, the message is left to its lease and the sender goes on
        log.error({ err: error, outboxId: message.id }, 'a queued mail could not be dealt with')
      }
    }
    return batch.length === batchSize && dealtWithAll
  }

  const schedule = () => {
    if (!started || closing || timer !== null) return
    timer = setTimeout(() => {
      timer = null
      void run()
    }, settings.pollIntervalMs)
    // the sender never keeps the process alive; close() ends it
    timer.unref()
  }

  /** Passes until a batch is not full (nothing more is due), unless closing; joins the run in progress. */
  const run = (): Promise<void> => {
    if (running !== null) {
      wokenWhileRunning = true
      return running
    }
    running = (async () => {
      let more = true
      while (more && !closing) {
        wokenWhileRunning = false
        more = (await pass()) || wokenWhileRunning
      }
    })()
      .catch((error: unknown) => log.error({ err: error }, 'the outbox sender failed a pass'))
      .finally(() => {
        running = null
        schedule()
      })
    return running
  }

  return {
    start() {
      if (started || closing) return
      started = true
      void run()
    },

    wake() {
      if (!started || closing) return
      if (timer !== null) clearTimeout(timer)
      timer = null
      void run()
    },

    async deliverDue() {
      if (running !== null) await running
      await run()
    },

    async close() {
      if (closing) return
      closing = true
      if (timer !== null) clearTimeout(timer)
      timer = null
      const inHand = running
      if (inHand !== null && !(await within(inHand, settings.closeGraceMs))) {
        // the send in progress is abandoned: its connection closed, the message is marked failed (or, should the
        // store be gone by then, left to its lease)
        await transport.close()
        await within(inHand, settings.closeGraceMs)
      } else await transport.close()
      await delivery.settleLeftovers()
    },
  }
}

/** Whether `promise` settles within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([promise.then(() => true), timeout])
  } finally {
    clearTimeout(timer)
  }
}
