import { StorageError } from '../errors.js'
import { wallClockDeadline } from '../time.js'

/**
 * One storage operation as it runs: what tells a write that its caller has stopped waiting, and what the write tells
 * the call about where it stands. Reads ignore it.
 */
export interface StorageAttempt {
  /** Aborted when the caller stops waiting (STORAGE_TIMEOUT_MS): the write must then not take effect any more. */
  readonly signal: AbortSignal
  /**
   * When the caller stops waiting, in epoch milliseconds of the wall clock (not the service clock: a Redis write
   * script checks it against Redis's TIME, src/time.ts); Infinity when it waits for good.
   */
  readonly deadline: number
  /**
   * Called by a write right before the step that may make it durable (COMMIT, sending a Redis script). False once
   * the caller has stopped waiting: the write must then not take that step. From a true on, a failure of the
   * operation leaves its outcome unknown.
   */
  commit(): boolean
}

/** Runs one storage operation, bounded in time, with any failure turned into a StorageError naming it. */
export type StorageCall = <T>(operation: string, run: (attempt: StorageAttempt) => Promise<T>) => Promise<T>

/**
 * A call's StorageAttempt. A class, so that a call allocates one small object: its AbortController is made only
 * when a write asks for the signal (most calls are reads, which never do), since a controller costs microseconds
 * and, held across a young-generation collection, is promoted to the old one (measured: an attempt made of a
 * controller and closures per call grew the old generation by 25 MiB per 100,000 calls in flight, this by none).
 */
class CallAttempt implements StorageAttempt {
  committing = false
  private controller: AbortController | undefined
  private abandonedBy: Error | undefined

  constructor(readonly deadline: number) {}

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.abandonedBy !== undefined) this.controller.abort(this.abandonedBy)
    }
    return this.controller.signal
  }

  commit(): boolean {
    if (this.abandonedBy !== undefined) return false
    this.committing = true
    return true
  }

  /** The caller stops waiting. */
  abandon(reason: Error): void {
    this.abandonedBy = reason
    this.controller?.abort(reason)
  }
}

/**
 * The bound every store puts around its driver calls: whatever a driver does when its server stops answering, the
 * request fails with a StorageError after `timeoutMs` instead of hanging. docs/api.md R7.2, R7.3: a write that fails
 * before its commit() did not and will not take effect (a 500); one that fails after may have (`outcomeUnknown`, a
 * 503). Null for a driver that runs on the event loop (SQLite): no timer could fire before it returns, so none is
 * set.
 */
export function createStorageCall(timeoutMs: number | null): StorageCall {
  return async (operation, run) => {
    // wall-clock time, not the injected service clock: the deadline is checked on another machine, against Redis's
    // TIME (redis-session-store.ts), which a test's fixed clock would be far from
    const attempt = new CallAttempt(
      timeoutMs === null ? Number.POSITIVE_INFINITY : wallClockDeadline(timeoutMs),
    )
    let timer: NodeJS.Timeout | undefined
    const timeout =
      timeoutMs === null
        ? null
        : new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              const error = new Error(`no answer within ${timeoutMs} ms`)
              reject(error)
              attempt.abandon(error)
            }, timeoutMs)
          })
    try {
      return await (timeout === null ? run(attempt) : Promise.race([run(attempt), timeout]))
    } catch (error) {
      throw new StorageError(`${operation} failed`, { cause: error, outcomeUnknown: attempt.committing })
    } finally {
      clearTimeout(timer)
    }
  }
}
