/** The part of the Web Locks API (`navigator.locks`) the client uses. */
export type RefreshLocks = Pick<LockManager, 'request'>

/**
 * Runs `task` holding the Web Lock `name`, so that tabs sharing a storage refresh one at a time. Where the Web
 * Locks API is missing (Node 20, old browsers) or refuses (an opaque origin), the task runs unlocked. A tab that
 * hangs holding the lock cannot block the others: after `timeoutMs` of waiting the task runs without it, which is
 * safe because the task re-reads the storage first and a refused refresh keeps a pair that another tab stored.
 * No user callback runs inside `task`.
 */
export async function withRefreshLock<T>(
  locks: RefreshLocks | null | undefined,
  name: string | undefined,
  timeoutMs: number,
  task: () => Promise<T>,
): Promise<T> {
  if (name === undefined || !locks) return task()
  const abandon = new AbortController()
  const timer = setTimeout(() => abandon.abort(), timeoutMs)
  let granted = false
  try {
    return await locks.request(name, { signal: abandon.signal }, () => {
      granted = true
      clearTimeout(timer)
      return task()
    })
  } catch (error) {
    if (granted) throw error
    return task()
  } finally {
    clearTimeout(timer)
  }
}
