import { StorageError } from '../errors.js'

/** Runs one storage operation, bounded in time, with any failure turned into a StorageError naming it. */
export type StorageCall = <T>(operation: string, run: () => Promise<T>) => Promise<T>

/**
 * The bound every store puts around its driver calls: whatever a driver does when its server stops answering, the
 * request fails with a StorageError (a 500) after `timeoutMs` instead of hanging. Null for a driver that runs on
 * the event loop (SQLite): no timer could fire before it returns, so none is set.
 */
export function createStorageCall(timeoutMs: number | null): StorageCall {
  if (timeoutMs === null) {
    return async (operation, run) => {
      try {
        return await run()
      } catch (error) {
        throw new StorageError(`${operation} failed`, { cause: error })
      }
    }
  }
  return async (operation, run) => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
    })
    try {
      return await Promise.race([run(), timeout])
    } catch (error) {
      throw new StorageError(`${operation} failed`, { cause: error })
    } finally {
      clearTimeout(timer)
    }
  }
}
