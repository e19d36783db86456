/** The part of the Web Locks API (`navigator.locks`) the client uses. */
export type RefreshLocks = Pick<LockManager, 'request'>

/**
 * Runs `task` holding the Web Lock `name`, so that tabs sharing a storage refresh one at a time; `task` learns
 * whether it had to wait for another holder (another tab's refresh). Where the Web Locks API is missing (Node 20,
 * old browsers) or refuses (an opaque origin), the task runs unlocked. A tab that hangs holding the lock cannot
 * block the others: after `timeoutMs` of waiting the task runs without it, which is safe because the task re-reads
 * the storage first and a refused refresh keeps a pair that another tab stored. No user callback runs inside `task`.
 */
export async function withRefreshLock<T>(
  locks: RefreshLocks | null | undefined,
  name: string | undefined,
  timeoutMs: number,
  task: (waited: boolean) => Promise<T>,
): Promise<T> {
  if (name === undefined || !locks) return task(false)
  const busy = {}
  const abandon = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let granted = false
  const run = (waited: boolean) => {
    granted = true
    clearTimeout(timer)
    return task(waited)
  }
  try {
    const result = await locks.request(name, { ifAvailable: true }, (lock) => (lock ? run(false) : busy))
    if (result !== busy) return result as T
    timer = setTimeout(() => abandon.abort(), timeoutMs)
    return await locks.request(name, { signal: abandon.signal }, () => run(true))
  } catch (error) {
    if (granted) throw error
    return task(true)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * After a refresh: holds the Web Lock `name` for `holdMs`, so that another tab that got a 401 with the same old pair
 * and takes the refresh lock after this tab released it learns, from the lock manager (which every tab sees at once,
 * unlike storage, whose writes reach other tabs late), that the pair was replaced. Resolves once the lock is held.
 */
export function markReplaced(
  locks: RefreshLocks | null | undefined,
  name: string,
  holdMs: number,
): Promise<void> {
  if (!locks) return Promise.resolve()
  return new Promise((held) => {
    locks
      .request(name, { ifAvailable: true }, () => {
        held()
        return new Promise<void>((release) => {
          const timer = setTimeout(release, holdMs)
          ;(timer as { unref?: () => void }).unref?.()
        })
      })
      .catch(() => held())
  })
}

/** Whether another tab holds the marker `name` of markReplaced: it has just replaced the pair the marker names. */
export async function isMarkedReplaced(
  locks: RefreshLocks | null | undefined,
  name: string,
): Promise<boolean> {
  if (!locks) return false
  try {
    return await locks.request(name, { ifAvailable: true }, (lock) => lock === null)
  } catch {
    return false
  }
}
