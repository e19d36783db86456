// The large-store comparison: the same figures on a store of settings.scaledUsers accounts (B) and of
// settings.baselineUsers (A), alternated, so the ratio says what the size of the store costs.
import { accessTokens, refreshChains } from './accounts.mjs'
import { alternate } from './pairs.mjs'
import { servicePhase } from './phases.mjs'
import { reporter } from './progress.mjs'
import { figureRow, ratioTarget } from './rows.mjs'
import { authMe, LOGIN, loadShapes, warmUp } from './scenarios.mjs'

/** The large store serves each figure at 90 % of the small one's rate or better. */
const SCALE_RATIO = 0.9

/**
 * @param {import('./scenarios.mjs').Context} context
 * @param {import('./service-process.mjs').ServerProcess} small on settings.baselineUsers accounts
 * @param {import('./service-process.mjs').ServerProcess} large on settings.scaledUsers accounts
 * @returns {Promise<import('./rows.mjs').Row[]>}
 */
export async function compareScale(context, small, large) {
  const { settings, log, backend } = context
  const { http, argon2: argon2Load } = loadShapes(settings)
  const [smallMe, largeMe] = await Promise.all([
    accessTokens(small.url, settings.httpConnections, settings.baselineUsers).then(authMe),
    accessTokens(large.url, settings.httpConnections, settings.scaledUsers).then(authMe),
  ])
  const label = `${settings.scaledUsers.toLocaleString('en-US')} accounts`
  const sameAt = `same at ${settings.baselineUsers.toLocaleString('en-US')} accounts`

  log(`${backend}: warming up the two stores`)
  await warmUp(settings, [
    { url: small.url, shape: argon2Load, scenario: LOGIN },
    { url: small.url, shape: http, scenario: smallMe },
    { url: large.url, shape: argon2Load, scenario: LOGIN },
    { url: large.url, shape: http, scenario: largeMe },
  ])

  const report = reporter(log, `${backend} @ ${label}`)
  /**
   * @param {string} figure
   * @param {(service: import('./service-process.mjs').ServerProcess, side: 0 | 1) =>
   *   Promise<import('./phases.mjs').ServicePhase>} measure
   */
  const sideBySide = async (figure, measure) => {
    const run = await alternate(
      settings.pairs,
      (pair) => report.limit(`${figure} (${sameAt})`, pair, measure(small, 0)),
      (pair) => report.figure(figure, pair, measure(large, 1)),
    )
    return figureRow(backend, `${figure} @ ${label}`, run, sameAt, ratioTarget('>=', SCALE_RATIO))
  }

  const login = await sideBySide('POST /auth/login', (service) =>
    servicePhase(service, { ...argon2Load, scenario: LOGIN }),
  )
  const me = await sideBySide('GET /auth/me', (service, side) =>
    servicePhase(service, { ...http, scenario: side === 0 ? smallMe : largeMe }),
  )
  // both stores' chains are made before the pair, so that its two phases follow each other closely
  /** @type {[string[], string[]]} */
  let chains = [[], []]
  const refresh = await sideBySide('POST /auth/refresh', async (service, side) => {
    if (side === 0) {
      chains = await Promise.all([
        refreshChains(small.url, settings.httpConnections, settings.baselineUsers),
        refreshChains(large.url, settings.httpConnections, settings.scaledUsers),
      ])
    }
    return servicePhase(service, { ...http, scenario: { kind: 'refresh', tokens: chains[side] } })
  })
  return [login, me, refresh]
}
