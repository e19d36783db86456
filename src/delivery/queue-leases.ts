import type { Clock } from '../clock.js'
import type { OutboxMessage, OutboxStore } from '../storage/stores.js'
import type { StoreFailureLog } from './store-failure-log.js'

/** A claimed message in the sender's hands, from its claim until it is settled or given back. */
export interface HeldMessage {
  readonly message: OutboxMessage
  /** The random value of the claim that took it. */
  readonly claimant: string
  /**
   * Aborts once the claim is lost: another process took the message over or it was removed (a renewal no longer
   * found it held), or its lease is about to end while the store fails to renew it. Its reason says which. A send in
   * progress is then abandoned: the message is whoever's claims it next.
   */
  readonly signal: AbortSignal
  /**
   * Whether the message may be sent now: its claim still held, with at least half a lease to go (renewed now when
   * less is left: the renewals could not keep up). False once the claim is lost (`signal` aborted then).
   */
  confirm(): Promise<boolean>
}

/** The leases of the messages a sender holds, renewed while it works on them (docs/api.md R6.4.2, R6.5.2). */
export interface QueueLeases {
  /** Takes the messages of one claim (`claimant`'s, until `leaseUntil`) in hand: renewed from now on. */
  hold(messages: readonly OutboxMessage[], claimant: string, leaseUntil: number): HeldMessage[]
  /** The message was settled (or given back): no longer renewed. */
  letGo(held: HeldMessage): void
  /** Stops renewing. */
  close(): void
}

export interface QueueLeasesDeps {
  outbox: Pick<OutboxStore, 'renew'>
  clock: Clock
  storeFailures: StoreFailureLog
  /** How long a claim, or a renewal, holds a message. */
  leaseMs: number
  /** How often the messages in hand are renewed. */
  renewEveryMs: number
}

/** Why a held message's signal aborts. */
export const CLAIM_TAKEN = 'another process took it over, or it was removed'
export const CLAIM_UNRENEWED = 'its lease is ending and the outbox cannot renew it'

interface Lease {
  held: HeldMessage
  controller: AbortController
  /** Until when the store last said the claim holds it. */
  leaseUntil: number
}

/**
 * The leases of one sender: a short lease on each message it holds, renewed every `renewEveryMs` (one statement per
 * claim) while the message is in hand, so that a lease follows the work actually in progress, however long a send
 * may take: a process that dies leaves its messages to the next claim within a lease of its last renewal, and a
 * live one keeps them for as long as it sends. A message the renewal no longer finds held (taken over after a lapse,
 * or removed with its account) is abandoned, and so is one whose lease would end before the next renewal while the
 * store fails: a send is never knowingly continued past the claim that allows it.
 */
export function createQueueLeases(deps: QueueLeasesDeps): QueueLeases {
  const { outbox, clock, storeFailures, leaseMs, renewEveryMs } = deps
  const leases = new Map<HeldMessage, Lease>()
  let timer: NodeJS.Timeout | null = null
  let renewing = false

  const lose = (lease: Lease, why: string) => {
    if (!lease.controller.signal.aborted) lease.controller.abort(why)
  }

  /** Renews the leases of `group` (one claimant's) until `leaseUntil`; throws when the store fails. */
  const renew = async (group: readonly Lease[], claimant: string, leaseUntil: number) => {
    const ids = group.map((lease) => lease.held.message.id)
    const kept = new Set(await outbox.renew(ids, claimant, leaseUntil))
    storeFailures.answered('outbox.renew')
    for (const lease of group) {
      if (kept.has(lease.held.message.id)) lease.leaseUntil = leaseUntil
      else lose(lease, CLAIM_TAKEN)
    }
  }

  const renewAll = async () => {
    if (renewing) return
    renewing = true
    try {
      const byClaimant = new Map<string, Lease[]>()
      for (const lease of leases.values()) {
        if (lease.controller.signal.aborted) continue
        const group = byClaimant.get(lease.held.claimant)
        if (group === undefined) byClaimant.set(lease.held.claimant, [lease])
        else group.push(lease)
      }
      for (const [claimant, group] of byClaimant) {
        try {
          await renew(group, claimant, clock.now() + leaseMs)
        } catch (error) {
          storeFailures.failed('outbox.renew', error)
          // the next renewal may come too late: better a send tried again than one made twice
          for (const lease of group)
            if (lease.leaseUntil <= clock.now() + renewEveryMs) lose(lease, CLAIM_UNRENEWED)
        }
      }
    } finally {
      renewing = false
    }
  }

  const confirm = async (lease: Lease): Promise<boolean> => {
    if (lease.controller.signal.aborted) return false
    if (lease.leaseUntil - clock.now() >= leaseMs / 2) return true
    try {
      await renew([lease], lease.held.claimant, clock.now() + leaseMs)
    } catch (error) {
      storeFailures.failed('outbox.renew', error)
      lose(lease, CLAIM_UNRENEWED)
    }
    return !lease.controller.signal.aborted
  }

  return {
    hold(messages, claimant, leaseUntil) {
      return messages.map((message) => {
        const controller = new AbortController()
        let lease: Lease | null = null
        const held: HeldMessage = {
          message,
          claimant,
          signal: controller.signal,
          confirm: () => confirm(lease as Lease),
        }
        lease = { held, controller, leaseUntil }
        leases.set(held, lease)
        if (timer === null) {
          timer = setInterval(() => void renewAll(), renewEveryMs)
          // the leases never keep the process alive; the sender's close() ends them
          timer.unref()
        }
        return held
      })
    },

    letGo(held) {
      leases.delete(held)
      if (leases.size === 0 && timer !== null) {
        clearInterval(timer)
        timer = null
      }
    },

    close() {
      if (timer !== null) clearInterval(timer)
      timer = null
    },
  }
}
