import { ServiceBusyError } from '../errors.js'
import { monotonicNow } from '../time.js'

export interface ConcurrencyLimiter {
  /**
   * Runs `task` when a slot is free; throws ServiceBusyError when the queue is full. `key` names whom the task is
   * for (a client address): waiting tasks are taken round-robin between keys. A `known` task (a login from an
   * address that has logged in to the account before, R8.6) waits in a lane served first, one task per key; a
   * key's further known tasks wait as any other.
   */
  run<T>(task: () => Promise<T>, key?: string, known?: boolean): Promise<T>
  /** Tasks running and waiting now. */
  stats(): { running: number; waiting: number }
}

/**
 * What the limiter tells whoever watches it (the metrics): when a task starts and how long it waited for its slot,
 * and when one is refused. Called synchronously; must not throw.
 */
export interface ConcurrencyObserver {
  /** A task got its slot after waiting `waitedMs` in the queue (0 when a slot was free at once). */
  started(waitedMs: number): void
  /** A task was refused with ServiceBusyError: the queue was full, or it lost its place to a fairer one. */
  refused(): void
}

interface Waiter {
  start(): void
  refuse(error: Error): void
}

/**
 * At most `concurrency` tasks run at once; up to `queueLimit` more wait. Used for Argon2, so that a flood of logins
 * neither exhausts memory (each hash holds its memory cost) nor takes every libuv thread.
 *
 * The queue is shared fairly (docs/api.md R8.2): each key waits in a line of its own and a free slot goes to the
 * next key in turn, so a key with a thousand tasks waiting delays another key's task by one task per other key, not
 * by a thousand. When the queue is full, a newcomer whose key waits less than the key that waits most takes the
 * place of that key's newest task (which is refused with 503); otherwise the newcomer is refused.
 *
 * Known tasks (logins from an address the account's owner uses) wait in a lane of their own, served before the
 * others, at most one task per key: however many addresses a flood comes from, it delays such a login by the known
 * logins ahead of it, not by the flood. In a full queue a known task takes the place of the newest task of the
 * longest other line; it is refused only when the queue holds known tasks alone.
 */
export function createConcurrencyLimiter(options: {
  concurrency: number
  queueLimit: number
  observer?: ConcurrencyObserver
}): ConcurrencyLimiter {
  const { observer } = options
  let running = 0
  let waiting = 0
  /** The lines by key, in turn order: the first key is served next and goes to the back if it still waits. */
  const lines = new Map<string, Waiter[]>()
  /** The known lane: one waiting task per key, in arrival order. */
  const known = new Map<string, Waiter>()

  const release = () => {
    const firstKnown = known.entries().next()
    if (firstKnown.done !== true) {
      const [key, next] = firstKnown.value
      known.delete(key)
      waiting--
      next.start()
      return
    }
    const first = lines.entries().next()
    if (first.done === true) {
      running--
      return
    }
    const [key, line] = first.value
    const next = line.shift() as Waiter
    waiting--
    lines.delete(key)
    if (line.length > 0) lines.set(key, line)
    // the slot is handed over, so `running` stays counted
    next.start()
  }

  /**
   * Makes room in a full queue by refusing the newest task of the longest line: for a task of `key`, only when that
   * line is longer than the key's own by more than one; for a known task, whatever its length.
   */
  const evict = (key: string, forKnown: boolean): boolean => {
    let longest: Waiter[] | undefined
    let longestKey = ''
    for (const [otherKey, line] of lines) {
      if (longest === undefined || line.length > longest.length) {
        longest = line
        longestKey = otherKey
      }
    }
    const own = forKnown ? -1 : (lines.get(key)?.length ?? 0)
    if (longest === undefined || longest.length <= own + 1) return false
    const evicted = longest.pop() as Waiter
    waiting--
    if (longest.length === 0) lines.delete(longestKey)
    observer?.refused()
    evicted.refuse(new ServiceBusyError())
    return true
  }

  return {
    async run(task, key = '', isKnown = false) {
      const lane = isKnown && !known.has(key) ? 'known' : 'any'
      if (running < options.concurrency) {
        running++
        observer?.started(0)
      } else if (waiting < options.queueLimit || evict(key, lane === 'known')) {
        const queuedAt = observer === undefined ? 0 : monotonicNow()
        await new Promise<void>((start, refuse) => {
          if (lane === 'known') known.set(key, { start, refuse })
          else {
            const line = lines.get(key)
            if (line === undefined) lines.set(key, [{ start, refuse }])
            else line.push({ start, refuse })
          }
          waiting++
        })
        observer?.started(monotonicNow() - queuedAt)
      } else {
        observer?.refused()
        throw new ServiceBusyError()
      }
      try {
        return await task()
      } finally {
        release()
      }
    },
    stats: () => ({ running, waiting }),
  }
}
