import { describe, expect, it } from 'vitest'
import { createConcurrencyLimiter } from '../../src/auth/concurrency-limiter.js'
import { ServiceBusyError } from '../../src/errors.js'

function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((done) => {
    resolve = done
  })
  return { promise, resolve }
}

describe('createConcurrencyLimiter', () => {
  it('runs at most `concurrency` tasks at once, the rest in arrival order', async () => {
    const limiter = createConcurrencyLimiter({ concurrency: 2, queueLimit: 10 })
    const gates = [deferred(), deferred(), deferred(), deferred()]
    const started: number[] = []
    const runs = gates.map((gate, i) =>
      limiter.run(async () => {
        started.push(i)
        await gate.promise
        return i
      }),
    )
    await new Promise((resolve) => setImmediate(resolve))
    expect(started).toEqual([0, 1])
    expect(limiter.stats()).toEqual({ running: 2, waiting: 2 })
    gates[1]?.resolve()
    await runs[1]
    await new Promise((resolve) => setImmediate(resolve))
    expect(started).toEqual([0, 1, 2])
    for (const gate of gates) gate.resolve()
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3])
    expect(limiter.stats()).toEqual({ running: 0, waiting: 0 })
  })

  it('refuses with ServiceBusyError past the queue limit, and frees the slot of a failed task', async () => {
    const limiter = createConcurrencyLimiter({ concurrency: 1, queueLimit: 1 })
    const gate = deferred()
    const first = limiter.run(() => gate.promise)
    const second = limiter.run(async () => {
      throw new Error('task failed')
    })
    await expect(limiter.run(async () => 'third')).rejects.toBeInstanceOf(ServiceBusyError)
    gate.resolve()
    await first
    await expect(second).rejects.toThrow('task failed')
    expect(await limiter.run(async () => 'after')).toBe('after')
    expect(limiter.stats()).toEqual({ running: 0, waiting: 0 })
  })
})
