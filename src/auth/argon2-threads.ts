import { Worker } from 'node:worker_threads'

/** What @node-rs/argon2 takes for a hash. */
export interface Argon2Options {
  algorithm: number
  memoryCost: number
  timeCost: number
  parallelism: number
}

export interface Argon2Threads {
  /**
   * How many computations to hand it at once: two per thread, one computing and one waiting in the thread's own
   * queue, so that a thread never idles waiting for the event loop. At most one per thread computes.
   */
  capacity: number
  /** Starts the threads now; otherwise they start with the first computation. */
  start(): void
  /** How many threads are running: none until start() or the first computation. */
  readonly running: number
  hash(password: string | Uint8Array, options: Argon2Options): Promise<string>
  verify(storedHash: string, password: string): Promise<boolean>
  /** Stops the threads; pending computations fail. */
  close(): Promise<void>
}

/** A computation sent to a thread (argon2-thread.js). */
export type Argon2Job =
  | { id: number; kind: 'hash'; password: string | Uint8Array; options: Argon2Options }
  | { id: number; kind: 'verify'; hash: string; password: string }

/** A thread's answer to the job with the same id: the hash, the verification's result, or the library's error. */
export type Argon2Reply = { id: number; value: string | boolean } | { id: number; error: string }

interface Pending {
  resolve(value: unknown): void
  reject(error: Error): void
}

// a file of its own beside this one, in src/ (Vitest) as in dist/ (where tsc emits it with the compiled code)
const THREAD_FILE = new URL('./argon2-thread.js', import.meta.url)

/**
 * Argon2 on threads of its own (worker_threads), each computing one hash at a time with @node-rs/argon2's
 * synchronous calls. A thread takes its next job from its own queue as soon as it is done, without waiting for the
 * event loop, and allocating and freeing the hash's memory (19 MiB by default) happens on the thread, not on the
 * event loop as with the library's async calls. Jobs go to the thread with the fewest. A pool library measured
 * against this (piscina 5, docs/performance.md) was at best as fast, with a higher 99th-percentile latency. The
 * threads start with the first computation or start(), not before: the service starts them once its port is open
 * (docs/performance.md, issue 34), as booting them competes with its start-up for the cores.
 */
export function createArgon2Threads(count: number): Argon2Threads {
  const pending = new Map<number, Pending>()
  let nextId = 0
  let closing = false

  interface Thread {
    worker: Worker
    jobs: Set<number>
  }
  const threads: Thread[] = []
  const start = (): Thread => {
    const worker = new Worker(THREAD_FILE, {
      // the thread runs no JavaScript to speak of: a small heap keeps its memory small
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 },
    })
    const thread: Thread = { worker, jobs: new Set() }
    worker.unref()
    worker.on('message', (reply: Argon2Reply) => {
      thread.jobs.delete(reply.id)
      const job = pending.get(reply.id)
      pending.delete(reply.id)
      if ('error' in reply) job?.reject(new Error(reply.error))
      else job?.resolve(reply.value)
    })
    const fail = (error: Error) => {
      for (const id of thread.jobs) {
        pending.get(id)?.reject(error)
        pending.delete(id)
      }
      thread.jobs.clear()
      const index = threads.indexOf(thread)
      if (index >= 0 && !closing) threads[index] = start()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`argon2 thread exited with code ${code}`)))
    return thread
  }
  const startAll = () => {
    if (threads.length > 0 || closing) return
    for (let i = 0; i < count; i++) threads.push(start())
  }

  const submit = <T>(job: Argon2Job): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (closing) {
        reject(new Error('argon2 threads are closed'))
        return
      }
      startAll()
      const thread = threads.reduce((least, candidate) =>
        candidate.jobs.size < least.jobs.size ? candidate : least,
      )
      pending.set(job.id, { resolve: resolve as (value: unknown) => void, reject })
      thread.jobs.add(job.id)
      thread.worker.postMessage(job)
    })

  return {
    capacity: count * 2,
    start: startAll,
    get running() {
      return threads.length
    },
    hash: (password, options) => submit<string>({ id: nextId++, kind: 'hash', password, options }),
    verify: (storedHash, password) =>
      submit<boolean>({ id: nextId++, kind: 'verify', hash: storedHash, password }),
    async close() {
      closing = true
      await Promise.all(threads.map((thread) => thread.worker.terminate()))
    },
  }
}
