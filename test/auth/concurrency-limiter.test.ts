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

/** Tasks that note their name as they start and then wait for `gate`. */
function recorded() {
  const gate = deferred()
  const started: string[] = []
  const task = (name: string) => async () => {
    started.push(name)
    await gate.promise
  }
  return { gate, started, task }
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

  it('the Argon2 queue is shared fairly: waiting tasks are taken round-robin between keys', async () => {
    const limiter = createConcurrencyLimiter({ concurrency: 1, queueLimit: 100 })
    const { gate, started, task } = recorded()
    const runs = [limiter.run(task('flood-0'), 'flood')]
    for (let i = 1; i <= 5; i++) runs.push(limiter.run(task(`flood-${i}`), 'flood'))
    runs.push(limiter.run(task('alice'), 'alice'), limiter.run(task('bob'), 'bob'))
    gate.resolve()
    await Promise.all(runs)
    // after the running one, the flood waits its turn: one of its tasks, then one of each other key
    expect(started.slice(0, 4)).toEqual(['flood-0', 'flood-1', 'alice', 'bob'])
  })

  it('a full queue makes room for a key that waits less by refusing the newest task of the longest line', async () => {
    const limiter = createConcurrencyLimiter({ concurrency: 1, queueLimit: 4 })
    const { gate, started, task } = recorded()
    const running = limiter.run(task('flood-0'), 'flood')
    const flood = [1, 2, 3, 4].map((i) => limiter.run(task(`flood-${i}`), 'flood'))
    // the queue is full of the flood: the flood itself is refused, another key takes the place of its newest task
    await expect(limiter.run(task('flood-5'), 'flood')).rejects.toBeInstanceOf(ServiceBusyError)
    const alice = limiter.run(task('alice'), 'alice')
    await expect(flood[3]).rejects.toBeInstanceOf(ServiceBusyError)
    expect(limiter.stats()).toEqual({ running: 1, waiting: 4 })
    gate.resolve()
    await Promise.all([running, alice, ...flood.slice(0, 3)])
    expect(started).toEqual(['flood-0', 'flood-1', 'alice', 'flood-2', 'flood-3'])
    expect(limiter.stats()).toEqual({ running: 0, waiting: 0 })
  })

  it('R8.2 a known task waits ahead of every key of a flood, one per key; its second waits as any other', async () => {
    const limiter = createConcurrencyLimiter({ concurrency: 1, queueLimit: 100 })
    const { gate, started, task } = recorded()
    const runs = [limiter.run(task('bot-0'), 'bot-0')]
    // a flood from many keys: round-robin alone would serve them all before a newcomer
    for (let i = 1; i <= 20; i++) runs.push(limiter.run(task(`bot-${i}`), `bot-${i}`))
    runs.push(limiter.run(task('alice-1'), 'alice', true), limiter.run(task('alice-2'), 'alice', true))
    runs.push(limiter.run(task('bob'), 'bob', true))
    gate.resolve()
    await Promise.all(runs)
    expect(started.slice(0, 4)).toEqual(['bot-0', 'alice-1', 'bob', 'bot-1'])
    // alice's second known task waited in her own line, behind the flood's keys
    expect(started.indexOf('alice-2')).toBe(started.length - 1)
  })

  it('R8.2 in a full queue a known task takes the place of the newest task of the longest line', async () => {
    const limiter = createConcurrencyLimiter({ concurrency: 1, queueLimit: 3 })
    const { gate, started, task } = recorded()
    const running = limiter.run(task('bot-a-0'), 'bot-a')
    const bots = [
      limiter.run(task('bot-a-1'), 'bot-a'),
      limiter.run(task('bot-b-1'), 'bot-b'),
      limiter.run(task('bot-a-2'), 'bot-a'),
    ]
    const alice = limiter.run(task('alice'), 'alice', true)
    await expect(bots[2]).rejects.toBeInstanceOf(ServiceBusyError)
    const bob = limiter.run(task('bob'), 'bob', true)
    await expect(bots[0]).rejects.toBeInstanceOf(ServiceBusyError)
    // only known tasks left but one: a third is refused once the queue holds known tasks alone
    const carol = limiter.run(task('carol'), 'carol', true)
    await expect(bots[1]).rejects.toBeInstanceOf(ServiceBusyError)
    await expect(limiter.run(task('dave'), 'dave', true)).rejects.toBeInstanceOf(ServiceBusyError)
    gate.resolve()
    await Promise.all([running, alice, bob, carol])
    expect(started).toEqual(['bot-a-0', 'alice', 'bob', 'carol'])
    expect(limiter.stats()).toEqual({ running: 0, waiting: 0 })
  })
})
