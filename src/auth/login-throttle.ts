import type { Clock } from '../clock.js'
import { RateLimitedError, StorageError } from '../errors.js'
import type { BackoffPolicy, LoginAttemptStore } from '../storage/stores.js'

export interface LoginThrottleSettings {
  /** Failed logins per client address and minute (R8.4); 0 turns this limit off. */
  addressFailuresPerMinute: number
  /** Failed logins of an account before it backs off (R8.5); 0 turns the backoff off. */
  accountFreeFailures: number
  /** The wait after the free failures; it doubles with each further one. */
  accountBaseDelayMs: number
  /** The longest wait between two attempts on one account: at most one guess per this time in the long run. */
  accountMaxDelayMs: number
  /** An account's failures are forgotten this long after the last one. */
  accountForgetAfterMs: number
  /** How long an address that logged in to an account (or registered it) is remembered for that account (R8.6). */
  rememberAddressMs: number
  /** Failures a remembered address may make against the account before it is treated as any other address. */
  rememberedFreeFailures: number
}

/** The defaults of docs/api.md §8. */
export const LOGIN_THROTTLE_DEFAULTS: Omit<LoginThrottleSettings, 'addressFailuresPerMinute'> = {
  accountFreeFailures: 5,
  accountBaseDelayMs: 1_000,
  accountMaxDelayMs: 5 * 60_000,
  accountForgetAfterMs: 60 * 60_000,
  rememberAddressMs: 30 * 24 * 60 * 60_000,
  rememberedFreeFailures: 5,
}

/** A login let through to the password check, and what it was counted against. */
export interface LoginPass {
  readonly email: string
  readonly address: string
  /** Let through as a remembered address of the account: neither the account's backoff nor the address limit applied. */
  readonly remembered: boolean
  /** The store failed and the attempt was counted in this process instead. */
  readonly degraded: boolean
  /**
   * A remembered address with no failure, whose record this process renewed less than RENEWAL_INTERVAL_MS ago: a
   * success need not write it again.
   */
  readonly renewedRecently: boolean
}

export interface LoginThrottle {
  /**
   * Before any Argon2 work: lets the attempt through, or throws RateLimitedError with the seconds to wait. An
   * attempt from an address not remembered for the account is counted as a failure in advance, so that concurrent
   * attempts cannot all pass. Never throws StorageError: a failing store is replaced by the in-process one (fail
   * safe), and the pass says so.
   */
  admit(email: string, address: string): Promise<LoginPass>
  /** The password was right: gives back what admit counted, and remembers the address for the account. */
  succeeded(pass: LoginPass): Promise<void>
  /** The password was wrong: a remembered address counts the failure against its exemption. */
  failed(pass: LoginPass): Promise<void>
  /** The address chose the account's password (registration): it is remembered for the account. */
  remember(email: string, address: string): Promise<void>
}

const MINUTE_MS = 60_000
/**
 * A success renews its address's record (R8.6) at most once in this time per process: logins of one account from
 * one address in a row (a script, an app, a benchmark) would otherwise write the record at every login, one more
 * store round trip each. The record is then kept 30 days from a success at most this much before the last one.
 */
export const RENEWAL_INTERVAL_MS = MINUTE_MS
/** Renewals remembered at most; past it the oldest go first. */
const MAX_RENEWALS = 10_000

/**
 * The login throttle of docs/api.md R8.4 to R8.6. Keys in the store: `address:<address>`, `account:<e-mail>`,
 * `known:<e-mail> <address>`. The e-mail is the normalized one, whether or not an account has it, so the throttle
 * does not tell which accounts exist.
 */
export function createLoginThrottle(deps: {
  store: LoginAttemptStore
  /** Counts in this process when `store` fails; null when `store` is already in-process. */
  fallback: LoginAttemptStore | null
  settings: LoginThrottleSettings
  clock: Clock
}): LoginThrottle {
  const { settings, clock } = deps
  const addressPolicy: BackoffPolicy = {
    free: settings.addressFailuresPerMinute,
    baseDelayMs: MINUTE_MS,
    maxDelayMs: MINUTE_MS,
    forgetAfterMs: MINUTE_MS,
  }
  const accountPolicy: BackoffPolicy = {
    free: settings.accountFreeFailures,
    baseDelayMs: settings.accountBaseDelayMs,
    maxDelayMs: settings.accountMaxDelayMs,
    forgetAfterMs: Math.max(settings.accountForgetAfterMs, settings.accountMaxDelayMs),
  }
  const limitsAddress = settings.addressFailuresPerMinute > 0
  const limitsAccount = settings.accountFreeFailures > 0

  /**
   * Runs `operation` on the store, or on the fallback when the store fails (the limit holds, in this process). Once
   * the store has failed for an attempt, its further operations go to the fallback at once: a store that does not
   * answer costs an attempt one STORAGE_TIMEOUT_MS, not one per operation.
   */
  const counting = async <T>(
    status: { degraded: boolean },
    operation: (store: LoginAttemptStore) => Promise<T>,
  ): Promise<T> => {
    if (status.degraded && deps.fallback !== null) return operation(deps.fallback)
    try {
      return await operation(deps.store)
    } catch (error) {
      if (!(error instanceof StorageError) || deps.fallback === null) throw error
      status.degraded = true
      return operation(deps.fallback)
    }
  }
  /** known-key → when this process last wrote it, oldest first (Map keeps insertion order). */
  const renewals = new Map<string, number>()
  const renewed = (key: string, now: number) => {
    renewals.delete(key)
    renewals.set(key, now)
    if (renewals.size > MAX_RENEWALS) renewals.delete(renewals.keys().next().value as string)
  }
  const renewedRecently = (key: string, now: number) => {
    const last = renewals.get(key)
    return last !== undefined && now - last < RENEWAL_INTERVAL_MS && now >= last
  }
  const keys = (email: string, address: string) => ({
    address: `address:${address}`,
    account: `account:${email}`,
    known: `known:${email} ${address}`,
  })

  return {
    async admit(email, address) {
      const now = clock.now()
      const key = keys(email, address)
      const status = { degraded: false }
      if (!limitsAddress && !limitsAccount)
        return { email, address, remembered: false, degraded: false, renewedRecently: false }
      // R8.6: a remembered address is checked, not counted in advance, so that its owner's concurrent logins all
      // pass; its failures are counted after the fact (failed), which lets a burst of concurrent guesses from that
      // one address through at most once per success of the owner, bounded by the Argon2 queue
      const failures = await counting(status, (store) => store.remembered(key.known, now))
      const remembered = failures !== null && failures < settings.rememberedFreeFailures
      if (remembered) {
        // a record with failures is always written again: a success starts it afresh (R8.6)
        const fresh = failures === 0 && !status.degraded && renewedRecently(key.known, now)
        return { email, address, remembered, degraded: status.degraded, renewedRecently: fresh }
      }
      if (limitsAddress) {
        const wait = await counting(status, (store) => store.take(key.address, now, addressPolicy))
        if (wait > 0) throw new RateLimitedError(Math.ceil(wait / 1000))
      }
      if (limitsAccount) {
        const wait = await counting(status, (store) => store.take(key.account, now, accountPolicy))
        if (wait > 0) {
          // not evaluated, so not a failure of the address
          if (limitsAddress) await counting(status, (store) => store.refund(key.address, now))
          throw new RateLimitedError(Math.ceil(wait / 1000))
        }
      }
      return { email, address, remembered, degraded: status.degraded, renewedRecently: false }
    },

    async succeeded(pass) {
      if (pass.renewedRecently) return
      const now = clock.now()
      const key = keys(pass.email, pass.address)
      const status = { degraded: false }
      if (!pass.remembered) {
        if (limitsAddress) await counting(status, (store) => store.refund(key.address, now))
        // the owner proved the password from an address the account let through: its failures are forgotten
        if (limitsAccount) await counting(status, (store) => store.forget(key.account))
      }
      await counting(status, (store) => store.remember(key.known, now, settings.rememberAddressMs))
      if (!status.degraded) renewed(key.known, now)
    },

    async failed(pass) {
      if (!pass.remembered) return
      const key = keys(pass.email, pass.address)
      await counting({ degraded: false }, (store) => store.count(key.known, clock.now()))
    },

    async remember(email, address) {
      const key = keys(email, address)
      const now = clock.now()
      const status = { degraded: false }
      await counting(status, (store) => store.remember(key.known, now, settings.rememberAddressMs))
      if (!status.degraded) renewed(key.known, now)
    },
  }
}
