import { StorageError } from '../errors.js'

/**
 * One storage operation as it runs: what tells a write that its caller has stopped waiting, and what the write tells
 * the call about where it stands. Reads ignore it.
 */
export interface StorageAttempt {
  /** Aborted when the caller stops waiting (STORAGE_TIMEOUT_MS): the write must then not take effect any more. */
  readonly signal: AbortSignal
  /** When the caller stops waiting, in epoch milliseconds of the system clock; Infinity when it waits for good. */
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
 * The bound every store puts around its driver calls: whatever a driver does when its server stops answering, the
 * request fails with a StorageError after `timeoutMs` instead of hanging. docs/api.md R7.2, R7.3: a write that fails
 * before its commit() did not and will not take effect (a 500); one that fails after may have (`outcomeUnknown`, a
 * 503). Null for a driver that runs on the event loop (SQLite): no timer could fire before it returns, so none is
 * set.
 */
export function createStorageCall(timeoutMs: number | null): StorageCall {
  return async (operation, run) => {
    const controller = new AbortController()
    let committing = false
    const attempt: StorageAttempt = {
      signal: controller.signal,
      deadline: timeoutMs === null ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs,
      commit() {
        if (controller.signal.aborted) return false
        committing = true
        return true
      },
    }
    let timer: NodeJS.Timeout | undefined
    const timeout =
      timeoutMs === null
        ? null
        : new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              const error = new Error(`no answer within ${timeoutMs} ms`)
              reject(error)
              controller.abort(error)
            }, timeoutMs)
          })
    try {
      return await (timeout === null ? run(attempt) : Promise.race([run(attempt), timeout]))
    } catch (error) {
      throw new StorageError(`${operation} failed`, { cause: error, outcomeUnknown: committing })
    } finally {
      clearTimeout(timer)
    }
  }
}
