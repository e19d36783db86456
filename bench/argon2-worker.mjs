// The Argon2 ceiling, in its own process (forked by limits.mjs): raw @node-rs/argon2 hash or verify with the
// service's parameters, `concurrency` computations at a time (the service's AUTH_HASH_CONCURRENCY), for a fixed time.
// Each computation stream is a thread of its own calling the library's synchronous hash or verify back to back: the
// fastest way this machine runs Argon2 at that concurrency, faster than the library's async calls on the libuv pool
// (and the way the service runs it, on threads of its own). Reports completed operations per second.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { hash, hashSync, verifySync } from '@node-rs/argon2'
import { argon2Options, BENCH_PASSWORD } from './argon2-options.mjs'
import { answerParent } from './child.mjs'

/**
 * @typedef {object} Argon2Request what limits.mjs sends
 * @property {'hash' | 'verify'} mode
 * @property {number} concurrency
 * @property {number} durationSeconds
 * @property {import('./argon2-options.mjs').Argon2Cost} argon2
 */

/** @typedef {{ opsPerSecond: number, completed: number, seconds: number }} Argon2Result */

/**
 * What each thread gets: it runs until `deadline` (epoch ms) and posts how many computations it completed.
 * @typedef {object} ThreadData
 * @property {'hash' | 'verify'} mode
 * @property {import('@node-rs/argon2').Options} options
 * @property {string} stored the hash that `verify` checks
 * @property {number} deadline
 */

if (isMainThread) {
  answerParent(measure)
} else {
  const { mode, options, stored, deadline } = /** @type {ThreadData} */ (workerData)
  let completed = 0
  while (Date.now() < deadline) {
    if (mode === 'hash') hashSync(BENCH_PASSWORD, options)
    else verifySync(stored, BENCH_PASSWORD)
    completed++
  }
  parentPort?.postMessage(completed)
}

/**
 * @param {Argon2Request} request
 * @returns {Promise<Argon2Result>}
 */
async function measure(request) {
  const options = argon2Options(request.argon2)
  const stored = await hash(BENCH_PASSWORD, options)
  const started = Date.now()
  const deadline = started + request.durationSeconds * 1000
  const counts = await Promise.all(
    Array.from({ length: request.concurrency }, () => {
      /** @type {ThreadData} */
      const data = { mode: request.mode, options, stored, deadline }
      return new Promise((resolve, reject) => {
        const worker = new Worker(new URL(import.meta.url), { workerData: data })
        worker.once('message', resolve)
        worker.once('error', reject)
      })
    }),
  )
  const completed = counts.reduce((sum, count) => sum + Number(count), 0)
  const seconds = (Date.now() - started) / 1000
  return { opsPerSecond: completed / seconds, completed, seconds }
}
