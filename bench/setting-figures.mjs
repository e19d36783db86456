// The settings an operator turns on (issue 20), or off, against the defaults: GET /auth/me and POST /auth/refresh of a
// service with one setting changed (B) alternated with the default service (A), both running at the same time on the
// same store (or, for a setting with `ownStores`, each on a fresh store of its own), so the ratio says what the
// setting costs on this machine in this run. Like the start-up ratio, these ratios
// have no target: they are reported, so that an operator can weigh the setting and later work can see it move.
import { generateKeyPairSync } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { accessTokens, refreshChains } from './accounts.mjs'
import { alternate } from './pairs.mjs'
import { servicePhase } from './phases.mjs'
import { reporter } from './progress.mjs'
import { figureRow } from './rows.mjs'
import { authMe, loadShapes, warmUp } from './scenarios.mjs'

/**
 * @typedef {object} Setting a setting an operator turns on, and the default it is measured against
 * @property {import('./settings.mjs').Figure} figure the figure selection (settings.figures) that measures it
 * @property {string} name as the rows show it
 * @property {string} defaultName the default it replaces, as the rows show it
 * @property {Record<string, string>} env the variables that turn it on, on top of the default service's
 * @property {boolean} [ownStores] measured with the default service and the setting's each on a fresh store of its own,
 *   rather than beside the default on the shared one (where instances of one deployment share a store, and differ in
 *   a setting only while it is being rolled out)
 */

/**
 * Sessions per device: each login starts a session of its own, access tokens carry its `sid`, and a refresh rotates
 * that session's chain.
 * @type {Setting}
 */
export const PER_DEVICE_SESSIONS = {
  figure: 'per-device',
  name: 'AUTH_SESSIONS=per-device',
  defaultName: 'AUTH_SESSIONS=single',
  env: { AUTH_SESSIONS: 'per-device' },
}

/**
 * No audit trail: the security events are logged only, and no registration, login, refresh or logout appends a row
 * (docs/api.md R6.3.5). What the trail costs the figures, which the benchmark measures with it on, as the default is.
 * On stores of their own, seeded alike: a deployment does not mix the two, and the service without a trail would
 * otherwise commit through a SQLite WAL holding the other's audit rows (docs/performance.md, eighth session).
 * @type {Setting}
 */
export const NO_AUDIT_TRAIL = {
  figure: 'no-audit',
  name: 'AUDIT_RETENTION_DAYS=0',
  defaultName: 'AUDIT_RETENTION_DAYS=90',
  env: { AUDIT_RETENTION_DAYS: '0' },
  ownStores: true,
}

/**
 * Access tokens signed with Ed25519 (refresh tokens stay HS256), with a key made for the run and written into `dir`
 * as `tessera keys generate` writes one (PKCS#8 PEM, readable by its owner only): production requires a key file.
 * @param {string} dir
 * @returns {Promise<Setting>}
 */
export async function eddsaAccessTokens(dir) {
  const file = join(dir, 'access-token-ed25519.pem')
  const { privateKey } = generateKeyPairSync('ed25519')
  await writeFile(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
  return {
    figure: 'eddsa',
    name: 'AUTH_JWT_ALGORITHM=EdDSA',
    defaultName: 'AUTH_JWT_ALGORITHM=HS256',
    env: {
      AUTH_JWT_ALGORITHM: 'EdDSA',
      AUTH_JWT_PRIVATE_KEY_FILE: file,
      // production requires it with EdDSA: the discovery document names the JWKS by an absolute URL. No phase asks
      // for that document, so any loopback URL does (http is allowed only there)
      PUBLIC_URL: 'http://127.0.0.1',
    },
  }
}

/**
 * GET /auth/me and POST /auth/refresh of each variant against the default service, side by side. The default
 * service and every variant run at the same time on the same store (as instances of one deployment share it), and
 * only one of them is loaded at a time.
 * @param {import('./scenarios.mjs').Context} context
 * @param {import('./service-process.mjs').ServerProcess} base the default service
 * @param {Array<{ setting: Setting, service: import('./service-process.mjs').ServerProcess }>} variants
 * @returns {Promise<import('./rows.mjs').Row[]>}
 */
export async function compareSettings(context, base, variants) {
  const { settings, log, backend } = context
  const { http } = loadShapes(settings)
  const users = settings.baselineUsers
  const services = [base, ...variants.map((variant) => variant.service)]
  // each service logs in accounts of its own (its pool: its place in `services`): by default an account has one
  // session, so a login on one service would end the session whose chain another one rotates
  /**
   * @param {import('./service-process.mjs').ServerProcess} service
   * @param {number} pool
   */
  const chains = (service, pool) => refreshChains(service.url, settings.httpConnections, users, pool)
  // and access tokens of its own: an EdDSA service refuses HS256 tokens, and per-device ones name a session
  const mes = await Promise.all(
    services.map((service, pool) =>
      accessTokens(service.url, settings.httpConnections, users, pool).then(authMe),
    ),
  )

  log(`${backend}: warming up the default service and ${variants.map((v) => v.setting.name).join(', ')}`)
  /** @type {Parameters<typeof warmUp>[1]} */
  const loads = []
  for (const [pool, service] of services.entries()) {
    const me = /** @type {import('./scenarios.mjs').Scenario} */ (mes[pool])
    loads.push(
      { url: service.url, shape: http, scenario: me },
      { url: service.url, shape: http, scenario: { kind: 'refresh', tokens: await chains(service, pool) } },
    )
  }
  await warmUp(settings, loads)

  /** @type {import('./rows.mjs').Row[]} */
  const rows = []
  for (const [index, { setting, service }] of variants.entries()) {
    const pool = index + 1
    const report = reporter(log, `${backend} ${setting.name}`)
    const sameWith = `same with ${setting.defaultName} (default)`
    /**
     * @param {string} figure
     * @param {(service: import('./service-process.mjs').ServerProcess, side: 0 | 1) =>
     *   Promise<import('./phases.mjs').ServicePhase>} measure
     */
    const sideBySide = async (figure, measure) => {
      const run = await alternate(
        settings.pairs,
        (pair) => report.limit(`${figure} (${sameWith})`, pair, measure(base, 0)),
        (pair) => report.figure(figure, pair, measure(service, 1)),
      )
      return figureRow(backend, `${figure} with ${setting.name}`, run, sameWith, null)
    }

    const me = [mes[0], mes[pool]]
    rows.push(
      await sideBySide('GET /auth/me', (target, side) =>
        servicePhase(target, {
          ...http,
          scenario: /** @type {import('./scenarios.mjs').Scenario} */ (me[side]),
        }),
      ),
    )
    // both services' chains are made before the pair, so that its two phases follow each other closely
    /** @type {[string[], string[]]} */
    let tokens = [[], []]
    rows.push(
      await sideBySide('POST /auth/refresh', async (target, side) => {
        if (side === 0) tokens = await Promise.all([chains(base, 0), chains(service, pool)])
        return servicePhase(target, { ...http, scenario: { kind: 'refresh', tokens: tokens[side] } })
      }),
    )
  }
  return rows
}
