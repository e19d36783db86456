import { ServiceBusyError } from '../errors.js'

export interface ConcurrencyLimiter {
  /** Runs `task` when a slot is free; throws ServiceBusyError at once when the queue is full. */
  run<T>(task: () => Promise<T>): Promise<T>
  /** Tasks running and waiting now. */
  stats(): { running: number; waiting: number }
}

/**
 * At most `concurrency` tasks run at once; up to `queueLimit` more wait in arrival order. Used for Argon2, so that a
 * flood of logins neither exhausts memory (each hash holds its memory cost) nor takes every libuv thread.
 */
export function createConcurrencyLimiter(options: {
  concurrency: number
  queueLimit: number
}): ConcurrencyLimiter {
  let running = 0
  const waiting: Array<() => void> = []

  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else running--
  }

  return {
    async run(task) {
      if (running < options.concurrency) {
        running++
      } else if (waiting.length < options.queueLimit) {
        // the slot is handed over by release(), so `running` stays counted
        await new Promise<void>((resolve) => waiting.push(resolve))
      } else {
        throw new ServiceBusyError()
      }
      try {
        return await task()
      } finally {
        release()
      }
    },
    stats: () => ({ running, waiting: waiting.length }),
  }
}
