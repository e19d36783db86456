// The machine's own limits, measured in the same run as the figures they bound: the HTTP ceiling (bare Fastify
// answering the same small JSON, loaded exactly like the service) and the Argon2 ceiling (raw @node-rs/argon2 at the
// service's parameters and concurrency, in its own process).
import { fileURLToPath } from 'node:url'
import { resultOfChild } from './child.mjs'
import { runLoad } from './load.mjs'

const ARGON2_WORKER = fileURLToPath(new URL('./argon2-worker.mjs', import.meta.url))

/**
 * Requests per second of the bare Fastify server on GET /health, with the same connections and duration as the
 * figure it bounds.
 * @param {import('./service-process.mjs').ServerProcess} bare
 * @param {import('./scenarios.mjs').LoadShape} load
 * @returns {Promise<{ value: number, load: import('./load.mjs').LoadResult }>}
 */
export async function httpCeiling(bare, load) {
  const result = await runLoad({ url: bare.url, ...load, scenario: { kind: 'get', path: '/health' } })
  return { value: result.requestsPerSecond, load: result }
}

/**
 * Raw Argon2 operations per second.
 * @param {'hash' | 'verify'} mode
 * @param {Omit<import('./argon2-worker.mjs').Argon2Request, 'mode'>} options
 * @returns {Promise<{ value: number, completed: number }>}
 */
export async function argon2Ceiling(mode, options) {
  /** @type {import('./argon2-worker.mjs').Argon2Request} */
  const request = { mode, ...options }
  const result = /** @type {import('./argon2-worker.mjs').Argon2Result} */ (
    await resultOfChild(ARGON2_WORKER, request, 'argon2 worker')
  )
  return { value: result.opsPerSecond, completed: result.completed }
}
