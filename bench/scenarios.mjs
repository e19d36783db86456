// What the phases of a backend share: the context they run in, the two shapes of load (HTTP-bound and Argon2-bound),
// the fixed scenarios and the warm-up.
import { BENCH_PASSWORD } from './argon2-options.mjs'
import { runLoad } from './load.mjs'
import { seededUser } from './seed.mjs'

/**
 * @typedef {object} Context
 * @property {string} backend
 * @property {import('./settings.mjs').Settings} settings
 * @property {import('./service-process.mjs').ServerProcess} bare
 * @property {(line: string) => void} log
 * @property {string} runId
 */

/** @typedef {{ connections: number, durationSeconds: number }} LoadShape */

/** @typedef {import('./load-worker.mjs').Scenario} Scenario */

export const HEALTH = /** @type {const} */ ({ kind: 'get', path: '/health' })
/** Every login phase logs in the same seeded account. */
export const LOGIN = /** @type {const} */ ({
  kind: 'login',
  email: seededUser(0).email,
  password: BENCH_PASSWORD,
})

/**
 * GET /auth/me, one access token per connection.
 * @param {string[]} tokens
 * @returns {Scenario}
 */
export function authMe(tokens) {
  return { kind: 'get', path: '/auth/me', tokens }
}

/**
 * The load of the HTTP-bound phases (GET /health, GET /auth/me, POST /auth/refresh and their bare Fastify limit)
 * and of the Argon2-bound ones (POST /auth/login, POST /auth/register).
 * @param {import('./settings.mjs').Settings} settings
 * @returns {{ http: LoadShape, argon2: LoadShape }}
 */
export function loadShapes(settings) {
  return {
    http: { connections: settings.httpConnections, durationSeconds: settings.httpSeconds },
    argon2: { connections: settings.argon2Connections, durationSeconds: settings.argon2Seconds },
  }
}

/**
 * An unmeasured load of settings.warmupSeconds on each scenario in turn, with the connections of its shape.
 * @param {import('./settings.mjs').Settings} settings
 * @param {Array<{ url: string, shape: LoadShape, scenario: Scenario }>} loads
 */
export async function warmUp(settings, loads) {
  for (const { url, shape, scenario } of loads) {
    await runLoad({ url, connections: shape.connections, durationSeconds: settings.warmupSeconds, scenario })
  }
}
