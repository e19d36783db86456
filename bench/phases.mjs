// One measured phase against a running service: an autocannon load (or two side by side, for the mixed run) while
// the service's peak RSS is watched.
import { runLoad } from './load.mjs'
import { watchPeakRss } from './rss.mjs'

/**
 * @typedef {object} ServicePhase
 * @property {number} value requests per second (2xx)
 * @property {import('./load.mjs').LoadResult} load
 * @property {number | null} peakRssMiB
 */

/**
 * @param {import('./service-process.mjs').ServerProcess} service
 * @param {{ connections: number, durationSeconds: number,
 *   scenario: import('./load-worker.mjs').Scenario }} load
 * @returns {Promise<ServicePhase>}
 */
export async function servicePhase(service, load) {
  assertRunning(service)
  const rss = watchPeakRss(service.pid)
  try {
    const result = await runLoad({ url: service.url, ...load })
    assertRunning(service)
    return { value: result.requestsPerSecond, load: result, peakRssMiB: rss.stop() }
  } finally {
    rss.stop()
  }
}

/**
 * Logins saturating Argon2 and GET /auth/me beside them, each from its own load process, at the same time.
 * `value` is the logins' rate; `me` is the GET /auth/me load.
 * @param {import('./service-process.mjs').ServerProcess} service
 * @param {{ durationSeconds: number, loginConnections: number, meConnections: number,
 *   login: import('./load-worker.mjs').Scenario, me: import('./load-worker.mjs').Scenario }} options
 * @returns {Promise<ServicePhase & { me: import('./load.mjs').LoadResult }>}
 */
export async function mixedPhase(service, options) {
  assertRunning(service)
  const rss = watchPeakRss(service.pid)
  try {
    const [login, me] = await Promise.all([
      runLoad({
        url: service.url,
        connections: options.loginConnections,
        durationSeconds: options.durationSeconds,
        scenario: options.login,
      }),
      runLoad({
        url: service.url,
        connections: options.meConnections,
        durationSeconds: options.durationSeconds,
        scenario: options.me,
      }),
    ])
    assertRunning(service)
    return { value: login.requestsPerSecond, load: login, me, peakRssMiB: rss.stop() }
  } finally {
    rss.stop()
  }
}

/** @param {import('./service-process.mjs').ServerProcess} service */
function assertRunning(service) {
  if (!service.isRunning()) {
    throw new Error(`${service.name} has exited:\n${service.recentOutput().join('\n')}`)
  }
}
