// The machine's own limits, measured in the same run as the figures they bound: the HTTP ceiling (bare Fastify
// answering the same small JSON, loaded exactly like the service) and the Argon2 ceiling (raw @node-rs/argon2 at the
// service's parameters and concurrency, in its own process).
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { runLoad } from './load.mjs'

const ARGON2_WORKER = fileURLToPath(new URL('./argon2-worker.mjs', import.meta.url))

/**
 * Requests per second of the bare Fastify server on GET /health, with the same connections and duration as the
 * figure it bounds.
 * @param {import('./service-process.mjs').ServerProcess} bare
 * @param {{ connections: number, durationSeconds: number }} load
 */
export async function httpCeiling(bare, load) {
  const result = await runLoad({ url: bare.url, ...load, scenario: { kind: 'get', path: '/health' } })
  return { value: result.requestsPerSecond, load: result }
}

/**
 * Raw Argon2 operations per second.
 * @param {'hash' | 'verify'} mode
 * @param {{ concurrency: number, durationSeconds: number,
 *   argon2: { memoryKiB: number, timeCost: number, parallelism: number } }} options
 * @returns {Promise<{ value: number, completed: number }>}
 */
export function argon2Ceiling(mode, options) {
  return new Promise((resolve, reject) => {
    const child = fork(ARGON2_WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    let settled = false
    child.once('message', (/** @type {any} */ message) => {
      settled = true
      if (message.type === 'result') {
        resolve({ value: message.result.opsPerSecond, completed: message.result.completed })
      } else reject(new Error(`argon2 worker failed: ${message.message}`))
    })
    child.once('error', (error) => {
      if (!settled) reject(error)
      settled = true
    })
    child.once('exit', (code) => {
      if (!settled) reject(new Error(`argon2 worker exited with ${code} before reporting`))
      settled = true
    })
    child.send({ mode, ...options })
  })
}
