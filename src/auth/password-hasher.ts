import { randomBytes } from 'node:crypto'
import { type Algorithm, parseOptions } from '@node-rs/argon2'
import type { Argon2Params } from '../config/auth-config.js'
import { type Argon2Threads, createArgon2Threads } from './argon2-threads.js'
import {
  type ConcurrencyLimiter,
  type ConcurrencyObserver,
  createConcurrencyLimiter,
} from './concurrency-limiter.js'

/** @node-rs/argon2 declares Algorithm as an ambient const enum, which isolated modules cannot read. */
const ARGON2ID = 2 as Algorithm

export interface PasswordHasher {
  /**
   * An Argon2id hash (PHC string) of the password with a fresh random salt. `requester` (a client address) is whom
   * the computation is for: the limiter's queue is shared fairly between requesters.
   */
  hash(password: string, requester?: string): Promise<string>
  /**
   * Whether the password matches the stored hash. `known`: the requester has logged in to this account before
   * (R8.6), so the check waits in the limiter's known lane, ahead of a flood from elsewhere.
   */
  verify(storedHash: string, password: string, requester?: string, known?: boolean): Promise<boolean>
  /**
   * Verifies against a fixed hash of the configured cost and returns false: a login for an unknown e-mail costs the
   * same time as a wrong password, so timing does not reveal which accounts exist.
   */
  verifyDummy(password: string, requester?: string): Promise<false>
  /** True when the stored hash was made with other parameters than the configured ones. */
  needsRehash(storedHash: string): boolean
}

/** The hasher on Argon2 threads, whose dummy hash can be computed ahead of its first use. */
export interface Argon2PasswordHasher extends PasswordHasher {
  /** Computes the dummy hash now rather than for the first unknown e-mail, whose answer would wait for it. */
  prepare(): void
}

/**
 * Argon2id on `argon2` (threads of its own, off the event loop). Every computation goes through `limiter`, so no
 * more are admitted than it allows and the rest wait in its bounded queue (past it, ServiceBusyError: a 503).
 */
export function createPasswordHasher(
  params: Argon2Params,
  limiter: ConcurrencyLimiter,
  argon2: Pick<Argon2Threads, 'hash' | 'verify'>,
): Argon2PasswordHasher {
  const options = {
    algorithm: ARGON2ID,
    memoryCost: params.memoryKiB,
    timeCost: params.timeCost,
    parallelism: params.parallelism,
  }
  let dummy: Promise<string> | null = null
  const dummyHash = (): Promise<string> => {
    if (dummy === null) {
      dummy = argon2.hash(randomBytes(32), options)
      // a failure surfaces when the dummy is used; here it would be an unhandled rejection
      dummy.catch(() => {})
    }
    return dummy
  }

  return {
    hash: (password, requester) => limiter.run(() => argon2.hash(password, options), requester),
    verify: (storedHash, password, requester, known) =>
      limiter.run(() => argon2.verify(storedHash, password), requester, known),
    prepare: () => void dummyHash(),
    async verifyDummy(password, requester) {
      const stored = await dummyHash()
      await limiter.run(() => argon2.verify(stored, password), requester)
      return false
    },
    needsRehash(storedHash) {
      try {
        const used = parseOptions(storedHash)
        return (
          used.algorithm !== ARGON2ID ||
          used.memoryCost !== params.memoryKiB ||
          used.timeCost !== params.timeCost ||
          used.parallelism !== params.parallelism
        )
      } catch {
        return true
      }
    },
  }
}

/** Password hashing with its threads and their limiter, as openPasswordHashing builds them. */
export interface PasswordHashing {
  hasher: PasswordHasher
  /** The queue in front of the threads (watched by the metrics). */
  limiter: ConcurrencyLimiter
  /**
   * Starts the threads and computes the dummy hash: the service calls it once its port is open, so that neither
   * competes with the start-up for the cores. Without it, both start with the first computation.
   */
  start(): void
  /** Stops the threads; pending computations fail. */
  close(): Promise<void>
}

export interface PasswordHashingOptions {
  /** The configured Argon2id parameters (AUTH_ARGON2_*). */
  params: Argon2Params
  /** Argon2 threads to start (AUTH_HASH_CONCURRENCY for the service, one for an operator command). */
  threads: number
  /** Computations that may wait for a thread before ServiceBusyError (AUTH_HASH_QUEUE_LIMIT). */
  queueLimit: number
  observer?: ConcurrencyObserver
}

/**
 * The one way a password hasher is built, for the service and for `tessera users reset-password` alike: Argon2id
 * with the configured parameters, on threads of its own behind a limiter of their capacity.
 */
export function openPasswordHashing(options: PasswordHashingOptions): PasswordHashing {
  const argon2 = createArgon2Threads(options.threads)
  const limiter = createConcurrencyLimiter({
    concurrency: argon2.capacity,
    queueLimit: options.queueLimit,
    observer: options.observer,
  })
  const hasher = createPasswordHasher(options.params, limiter, argon2)
  return {
    hasher,
    limiter,
    start() {
      argon2.start()
      hasher.prepare()
    },
    close: () => argon2.close(),
  }
}

/**
 * Whether `password` is the account's, for an account that may have no usable password (`storedHash` null: docs/api.md
 * R4.15.1): then the same Argon2 work as a wrong password, and false, so the two cannot be told apart.
 */
export function verifyAccountPassword(
  hasher: Pick<PasswordHasher, 'verify' | 'verifyDummy'>,
  storedHash: string | null,
  password: string,
  requester?: string,
  known?: boolean,
): Promise<boolean> {
  return storedHash === null
    ? hasher.verifyDummy(password, requester)
    : hasher.verify(storedHash, password, requester, known)
}
