// Runs one autocannon load in its own process (load-worker.mjs), so that the generator's work is never counted in the
// bench process and two loads can run side by side (the mixed run).
import { fileURLToPath } from 'node:url'
import { resultOfChild } from './child.mjs'

const WORKER = fileURLToPath(new URL('./load-worker.mjs', import.meta.url))

/**
 * @typedef {object} LoadResult
 * @property {number} durationSeconds
 * @property {number} requestsPerSecond 2xx responses per second
 * @property {number} ok 2xx responses
 * @property {number} non2xx
 * @property {number} errors connection errors, timeouts included
 * @property {number} timeouts
 * @property {number} mismatches
 * @property {number} brokenChains refresh chains that got no new token back
 * @property {Record<string, number>} statusCodes
 * @property {{ p50: number, p90: number, p99: number, max: number, mean: number }} latencyMs
 */

/**
 * @param {Omit<import('./load-worker.mjs').LoadRequest, 'timeoutSeconds'> & { timeoutSeconds?: number }} options
 * @returns {Promise<LoadResult>}
 */
export async function runLoad(options) {
  /** @type {import('./load-worker.mjs').LoadRequest} */
  const request = { timeoutSeconds: 10, ...options }
  return /** @type {LoadResult} */ (await resultOfChild(WORKER, request, 'load worker'))
}

/**
 * Errors as the targets count them: non-2xx responses where a 2xx was expected, connection errors and timeouts
 * (autocannon counts timeouts among its errors), and mismatched bodies. A broken refresh chain shows up as its
 * non-2xx responses.
 * @param {LoadResult} result
 */
export function errorCount(result) {
  return result.non2xx + result.errors + result.mismatches
}
