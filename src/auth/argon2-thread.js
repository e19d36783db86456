// One Argon2 thread, started by argon2-threads.ts. It computes the jobs it is sent one at a time with the library's
// synchronous calls: the next job waits on this thread's own port, so the thread starts it as soon as the previous
// one is done, without the event loop, and the hash's memory is allocated and freed here, not on the event loop.
// Plain JavaScript, checked by tsc through its JSDoc, so that the same file runs from src/ under Vitest and from dist/:
// Node loads it, not Vitest, so it imports packages and .js files only (types come in through JSDoc).
import { parentPort } from 'node:worker_threads'
import { hashSync, verifySync } from '@node-rs/argon2'

/** @import { Argon2Job, Argon2Reply } from './argon2-threads.js' */

const port = parentPort
if (port === null) throw new Error('argon2-thread.js runs only as a worker thread')

port.on('message', (/** @type {Argon2Job} */ job) => {
  /** @type {Argon2Reply} */
  let reply
  try {
    reply =
      job.kind === 'hash'
        ? { id: job.id, value: hashSync(job.password, job.options) }
        : { id: job.id, value: verifySync(job.hash, job.password) }
  } catch (error) {
    reply = { id: job.id, error: error instanceof Error ? error.message : String(error) }
  }
  port.postMessage(reply)
})
