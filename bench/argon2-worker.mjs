// The Argon2 ceiling, in its own process (forked by limits.mjs): raw @node-rs/argon2 hash or verify with the
// service's parameters, `concurrency` computations at a time (the service's AUTH_HASH_CONCURRENCY), for a fixed time.
// Each computation stream is a thread of its own calling the library's synchronous hash or verify back to back: the
// fastest way this machine runs Argon2 at that concurrency, faster than the library's async calls on the libuv pool
// (and the way the service runs it, on threads of its own). Reports completed operations per second.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { hash, hashSync, verifySync } from '@node-rs/argon2'

/** @node-rs/argon2's Algorithm.Argon2id (an ambient const enum in its types). */
const ARGON2ID = 2
const PASSWORD = 'correct horse battery staple'

if (isMainThread) {
  process.once('message', (/** @type {any} */ message) => {
    measure(message).then(
      (result) => process.send?.({ type: 'result', result }, () => process.exit(0)),
      (error) =>
        process.send?.({ type: 'error', message: String(error?.stack ?? error) }, () => process.exit(1)),
    )
  })
} else {
  const { mode, argon2Options, stored, deadline } = workerData
  let completed = 0
  while (Date.now() < deadline) {
    if (mode === 'hash') hashSync(PASSWORD, argon2Options)
    else verifySync(stored, PASSWORD)
    completed++
  }
  parentPort?.postMessage(completed)
}

/**
 * @param {{ mode: 'hash' | 'verify', concurrency: number, durationSeconds: number,
 *   argon2: { memoryKiB: number, timeCost: number, parallelism: number } }} options
 */
async function measure(options) {
  const argon2Options = {
    algorithm: ARGON2ID,
    memoryCost: options.argon2.memoryKiB,
    timeCost: options.argon2.timeCost,
    parallelism: options.argon2.parallelism,
  }
  const stored = await hash(PASSWORD, argon2Options)
  const started = Date.now()
  const deadline = started + options.durationSeconds * 1000
  const counts = await Promise.all(
    Array.from(
      { length: options.concurrency },
      () =>
        new Promise((resolve, reject) => {
          const worker = new Worker(new URL(import.meta.url), {
            workerData: { mode: options.mode, argon2Options, stored, deadline },
          })
          worker.once('message', resolve)
          worker.once('error', reject)
        }),
    ),
  )
  const completed = counts.reduce((sum, count) => sum + Number(count), 0)
  const seconds = (Date.now() - started) / 1000
  return { opsPerSecond: completed / seconds, completed, seconds }
}
