import { randomBytes } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { OutboxLane, OutboxMessage, OutboxStore } from '../storage/stores.js'
import type { DeliveryLog } from './delivery-log.js'
import { createQueueLeases, type HeldMessage } from './queue-leases.js'
import type { StoreFailureLog } from './store-failure-log.js'

export interface QueueSenderSettings {
  /** How often the outbox is looked at when nothing wakes the sender (and while sends are in flight). */
  pollIntervalMs: number
  /**
   * How long a claim holds a message unless it is renewed: what a process that dies with messages in hand delays them
   * by, at most.
   */
  leaseMs: number
  /** How often the leases of the messages in hand are renewed. */
  renewEveryMs: number
  /** While the store fails: at most one log line per this time. */
  failureLogEveryMs: number
  /** How long close() lets the sends in progress finish before it closes the connections under them. */
  closeGraceMs: number
}

export const QUEUE_SENDER_DEFAULTS: QueueSenderSettings = {
  pollIntervalMs: 1_000,
  // a killed process's messages are claimed again within 15 s of its last renewal, whatever a send may take
  // (MAIL_SEND_TIMEOUT_SECONDS, WEBHOOK_TIMEOUT_SECONDS); three renewals in a lease, so that one late or failed
  // leaves it held
  leaseMs: 15_000,
  renewEveryMs: 5_000,
  failureLogEveryMs: 60_000,
  closeGraceMs: 5_000,
}

/** What a lane does with the messages its sender claimed: its transport, and how each is settled. */
export interface LaneDelivery {
  /**
   * Delivers one claimed message and settles it: removed (delivered, skipped, given up) or due again later; left as
   * it is when its claim was lost before or while it was sent (whoever claims it next delivers it). Resolves false
   * when it gave the message back untried instead. Never rejects by design.
   */
  deliver(held: HeldMessage): Promise<boolean>
  /** Gives back claimed messages not tried. */
  release(messages: readonly OutboxMessage[], claimant: string): Promise<void>
  /** Makes the store calls that failed before (a removal after a delivery, above all). */
  settleLeftovers(): Promise<void>
}

export interface QueueSenderDeps {
  /** The lane this sender claims from, and only it. */
  lane: OutboxLane
  outbox: Pick<OutboxStore, 'claim' | 'renew'>
  delivery: LaneDelivery
  /** The lane's transport: what close() closes, so that a send in progress fails. */
  transport: { close(): Promise<void> }
  /** The most messages in flight at once (MAIL_SEND_CONNECTIONS, WEBHOOK_SEND_CONNECTIONS); 1 by default. */
  concurrency?: number
  clock: Clock
  log: DeliveryLog
  storeFailures: StoreFailureLog
  settings?: Partial<QueueSenderSettings>
}

/** Delivers one lane of the outbox in the background of a service process. */
export interface QueueSender {
  /** Starts polling the outbox. */
  start(): void
  /** A message was queued by this process: the outbox is looked at now rather than at the next poll. */
  wake(): void
  /** Delivers what is due now, until a claim finds no more; resolves when each is dealt with. For tests and tools. */
  deliverDue(): Promise<void>
  /** Stops polling, finishes the sends in hand (or abandons them after a grace), closes the transport. */
  close(): Promise<void>
}

/**
 * The sender of one lane of the outbox, the one delivery queue (docs/api.md §6.4, §6.5): the same machinery for
 * every lane, each with a transport of its own (SMTP for mail, HTTP for webhooks). Every process runs one per lane,
 * each with slots of its own, so that a lane whose deliveries are slow never holds the other back; the store hands
 * each message to one claimant at a time, so several processes share the work and none sends what another holds.
 * The sender keeps up to `concurrency` messages in flight: each time one is dealt with, it claims as many as are
 * free, so that each claim takes what is most worth sending at that moment (the lane's claim order) rather than
 * what a batch took before. Each message is settled on its own by the lane's delivery (removed when delivered or
 * given up; due again later with backoff when it failed). Its lease is short and renewed while it is in hand
 * (queue-leases.ts), so a process that dies leaves its messages to the others within a lease, however long a send
 * may take. A message is removed only after its receiver accepted it, so delivery is at least once; twice only when
 * the process dies (or the store fails) between the acceptance and the removal, and then with the same id. Nothing
 * here throws into the process: a store that fails is logged and tried again later.
 */
export function createQueueSender(deps: QueueSenderDeps): QueueSender {
  const { lane, outbox, transport, clock, log, storeFailures, delivery } = deps
  const settings = { ...QUEUE_SENDER_DEFAULTS, ...deps.settings }
  const slots = Math.max(1, deps.concurrency ?? 1)
  let started = false
  let closing = false
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> | null = null
  let woken = false
  const inFlight = new Set<Promise<void>>()
  /** Ends the pass's wait for something to change (a send dealt with, a wake, close); a no-op while it does not wait. */
  let nudge = () => {}

  const leases = createQueueLeases({
    outbox,
    clock,
    storeFailures,
    leaseMs: settings.leaseMs,
    renewEveryMs: settings.renewEveryMs,
  })

  /** At most `limit` messages claimed and in hand; null when the store failed. */
  const claim = async (limit: number): Promise<HeldMessage[] | null> => {
    const claimant = randomBytes(16).toString('hex')
    const leaseUntil = clock.now() + settings.leaseMs
    try {
      const claimed = await outbox.claim(lane, claimant, clock.now(), leaseUntil, limit)
      storeFailures.answered('outbox.claim')
      return leases.hold(claimed, claimant, leaseUntil)
    } catch (error) {
      storeFailures.failed('outbox.claim', error)
      return null
    }
  }

  /** Delivers `held` beside the others in flight; `gaveBack` when it was given back untried. */
  const dispatch = (held: HeldMessage, gaveBack: () => void) => {
    const dealtWith = delivery
      .deliver(held)
      .then(
        (done) => {
          if (!done) gaveBack()
        },
        (error: unknown) => {
          // nothing above throws by design; should it, the message is left to its lease and the sender goes on
          log.error(
            { err: error, outboxId: held.message.id, lane },
            'a queued message could not be dealt with',
          )
        },
      )
      .finally(() => {
        leases.letGo(held)
        inFlight.delete(dealtWith)
        nudge()
      })
    inFlight.add(dealtWith)
  }

  /** Until a send is dealt with, a wake or close (false), or the poll interval has passed (true). */
  const changed = () =>
    new Promise<boolean>((resolve) => {
      const poll = setTimeout(() => {
        nudge = () => {}
        resolve(true)
      }, settings.pollIntervalMs).unref()
      nudge = () => {
        clearTimeout(poll)
        nudge = () => {}
        resolve(false)
      }
    })

  /**
   * Keeps the slots filled for as long as claims come back full (more may be due), claiming again each time one is
   * free. While sends are in flight it also claims at a wake and at each poll interval (what other processes
   * queued). Ends once nothing is in flight and the last claim was not full, or at close.
   */
  const pass = async () => {
    let more = true
    for (;;) {
      if (closing) return
      const free = slots - inFlight.size
      if (free > 0 && (more || woken)) {
        woken = false
        await delivery.settleLeftovers()
        const held = (await claim(free)) ?? []
        if (closing) {
          // close() came during the claim: what it took goes back at once
          for (const entry of held) leases.letGo(entry)
          const [first] = held
          if (first !== undefined)
            await delivery.release(
              held.map((entry) => entry.message),
              first.claimant,
            )
          return
        }
        // a store that failed, or a message given back untried, is not claimed again at once
        more = held.length === free
        for (const entry of held)
          dispatch(entry, () => {
            more = false
          })
        continue
      }
      if (inFlight.size === 0) return
      if (await changed()) more = true
    }
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

  /** A pass, unless one is under way: that one is woken instead. */
  const run = (): Promise<void> => {
    if (running !== null) {
      woken = true
      nudge()
      return running
    }
    running = pass()
      .catch((error: unknown) => log.error({ err: error, lane }, 'the outbox sender failed a pass'))
      .finally(() => {
        running = null
        // woken as the pass ended: another one at once
        if (woken && started && !closing) void run()
        else schedule()
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
      nudge()
      const inHand = Promise.all([running, ...inFlight])
      if (!(await within(inHand, settings.closeGraceMs))) {
        // the sends in progress are abandoned: their connections closed, their messages marked failed (or, should
        // the store be gone by then, left to their leases)
        await transport.close()
        await within(Promise.all([...inFlight]), settings.closeGraceMs)
      } else await transport.close()
      leases.close()
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
