// The figures of one running service, each alternated with the limit that bounds it: the HTTP-bound ones against
// bare Fastify, the Argon2-bound ones against raw Argon2, and GET /auth/me beside saturating logins.
import { accessTokens, refreshChains } from './accounts.mjs'
import { BENCH_PASSWORD } from './argon2-options.mjs'
import { argon2Ceiling, httpCeiling } from './limits.mjs'
import { alternate } from './pairs.mjs'
import { mixedPhase, servicePhase } from './phases.mjs'
import { deleteRedisKeys } from './postgres.mjs'
import { reporter } from './progress.mjs'
import { figureRow, latencyRow, peakRssRow, ratioTarget } from './rows.mjs'
import { authMe, HEALTH, LOGIN, loadShapes, warmUp } from './scenarios.mjs'
import { startBareLogin, startBareRefresh } from './service-process.mjs'
import { argon2Variables } from './settings.mjs'

const BARE_LIMIT = 'bare Fastify GET req/s'
const VERIFY_LIMIT = 'raw Argon2 verify ops/s'
const HASH_LIMIT = 'raw Argon2 hash ops/s'
/** The login floor's row: what a server doing nothing but the hash reaches against the same ceiling (no target). */
const LOGIN_FLOOR = 'bare Fastify POST /auth/login on Argon2 threads'
/** The register floor's row: the same server hashing each body's password, against the hash ceiling (no target). */
const REGISTER_FLOOR = 'bare Fastify POST /auth/register on Argon2 threads'
/**
 * The refresh floor's rows: what a server doing only what a rotation must (verify, two signatures, one single-use
 * rotation in the service's store: an UPDATE through its SQLite writer, or a compare-and-set script in Redis)
 * reaches against the same ceiling (no target).
 */
const REFRESH_FLOOR = {
  sqlite: 'bare Fastify POST /auth/refresh with a durable SQLite rotation',
  redis: 'bare Fastify POST /auth/refresh with a Redis rotation',
}
/** Logins and registrations run at 90 % of raw Argon2 or better, on every backend. */
const ARGON2_RATIO = 0.9

/**
 * @typedef {object} Plan what one backend measures
 * @property {import('./settings.mjs').Figure[]} figures
 * @property {number | null} meTarget GET /auth/me ÷ bare Fastify, if it has a target on this backend
 * @property {number | null} refreshTarget POST /auth/refresh ÷ bare Fastify, if it has a target on this backend
 * @property {{ url: string, keyPrefix: string } | null} refreshFloorRedis where the refresh floor rotates its chains
 *   (Redis, with keys under the prefix, deleted afterwards), or null for a SQLite file of its own
 */

/**
 * The figures of one running service (plan.figures), each against its limit. The store holds
 * settings.baselineUsers seeded accounts.
 * @param {import('./scenarios.mjs').Context} context
 * @param {import('./service-process.mjs').ServerProcess} service
 * @param {Plan} plan
 * @returns {Promise<import('./rows.mjs').Row[]>}
 */
export async function benchmarkService(context, service, plan) {
  const { settings, bare, log, backend } = context
  const users = settings.baselineUsers
  const measures = new Set(plan.figures)
  const { http, argon2: argon2Load } = loadShapes(settings)
  const argon2Limit = {
    concurrency: settings.hashConcurrency,
    durationSeconds: settings.argon2Seconds,
    argon2: settings.argon2,
  }
  const me = authMe(await accessTokens(service.url, settings.httpConnections, users))
  const chains = () => refreshChains(service.url, settings.httpConnections, users)
  let registrations = 0
  /** @returns {import('./scenarios.mjs').Scenario} distinct e-mails for each load */
  const register = () => ({
    kind: 'register',
    emailPrefix: `bench-${context.runId}-${backend.replace(/\W+/g, '-')}-${registrations++}`,
    password: BENCH_PASSWORD,
  })

  log(`${backend}: warming up`)
  await warmUp(settings, [
    { url: bare.url, shape: http, scenario: HEALTH },
    { url: service.url, shape: http, scenario: HEALTH },
    { url: service.url, shape: http, scenario: me },
    { url: service.url, shape: http, scenario: { kind: 'refresh', tokens: await chains() } },
    { url: service.url, shape: argon2Load, scenario: LOGIN },
    ...(measures.has('register') ? [{ url: service.url, shape: argon2Load, scenario: register() }] : []),
  ])

  /** @type {import('./rows.mjs').Row[]} */
  const rows = []
  const report = reporter(log, backend)
  const bareCeiling = (/** @type {number} */ pair) => report.limit(BARE_LIMIT, pair, httpCeiling(bare, http))
  const verifyCeiling = (/** @type {number} */ pair) =>
    report.limit(VERIFY_LIMIT, pair, argon2Ceiling('verify', argon2Limit))
  const hashCeiling = (/** @type {number} */ pair) =>
    report.limit(HASH_LIMIT, pair, argon2Ceiling('hash', argon2Limit))
  /** @type {import('./phases.mjs').ServicePhase[]} phases of login saturation, for the peak RSS */
  const saturated = []

  if (measures.has('health')) {
    const run = await alternate(settings.pairs, bareCeiling, (pair) =>
      report.figure('GET /health', pair, servicePhase(service, { ...http, scenario: HEALTH })),
    )
    rows.push(figureRow(backend, 'GET /health', run, BARE_LIMIT, null))
  }

  if (measures.has('me')) {
    const run = await alternate(settings.pairs, bareCeiling, (pair) =>
      report.figure('GET /auth/me', pair, servicePhase(service, { ...http, scenario: me })),
    )
    rows.push(figureRow(backend, 'GET /auth/me', run, BARE_LIMIT, ratioTarget('>=', plan.meTarget)))
  }

  /**
   * POST /auth/refresh of `server` alternated with bare Fastify, with fresh chains before each pair: a phase ends with
   * requests in flight, whose new tokens are never seen.
   * @param {string} figure
   * @param {import('./service-process.mjs').ServerProcess} server
   * @param {() => Promise<string[]>} newChains
   */
  const refreshAgainstBare = (figure, server, newChains) => {
    /** @type {string[]} */
    let tokens = []
    return alternate(
      settings.pairs,
      async (pair) => {
        tokens = await newChains()
        return bareCeiling(pair)
      },
      (pair) =>
        report.figure(figure, pair, servicePhase(server, { ...http, scenario: { kind: 'refresh', tokens } })),
    )
  }

  if (measures.has('refresh')) {
    const run = await refreshAgainstBare('POST /auth/refresh', service, chains)
    rows.push(
      figureRow(backend, 'POST /auth/refresh', run, BARE_LIMIT, ratioTarget('>=', plan.refreshTarget)),
    )
  }

  if (measures.has('refresh-floor')) {
    const redis = plan.refreshFloorRedis
    const floorName = redis === null ? REFRESH_FLOOR.sqlite : REFRESH_FLOOR.redis
    const floor = await startBareRefresh(
      redis === null ? {} : { REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.keyPrefix },
    )
    try {
      const floorChains = () => refreshChains(floor.url, settings.httpConnections, users)
      await warmUp(settings, [
        { url: floor.url, shape: http, scenario: { kind: 'refresh', tokens: await floorChains() } },
      ])
      const run = await refreshAgainstBare(floorName, floor, floorChains)
      rows.push(figureRow(backend, floorName, run, BARE_LIMIT, null))
    } finally {
      await floor.stop()
      if (redis !== null) await deleteRedisKeys(redis.url, redis.keyPrefix)
    }
  }

  if (measures.has('login')) {
    const run = await alternate(settings.pairs, verifyCeiling, (pair) =>
      report.figure('POST /auth/login', pair, servicePhase(service, { ...argon2Load, scenario: LOGIN })),
    )
    saturated.push(...run.figures)
    rows.push(figureRow(backend, 'POST /auth/login', run, VERIFY_LIMIT, ratioTarget('>=', ARGON2_RATIO)))
  }

  if (measures.has('login-floor')) {
    const floor = await startBareLogin(argon2Variables(settings))
    try {
      await warmUp(settings, [{ url: floor.url, shape: argon2Load, scenario: LOGIN }])
      const run = await alternate(settings.pairs, verifyCeiling, (pair) =>
        report.figure(LOGIN_FLOOR, pair, servicePhase(floor, { ...argon2Load, scenario: LOGIN })),
      )
      rows.push(figureRow(backend, LOGIN_FLOOR, run, VERIFY_LIMIT, null))
    } finally {
      await floor.stop()
    }
  }

  if (measures.has('register')) {
    const run = await alternate(settings.pairs, hashCeiling, (pair) =>
      report.figure(
        'POST /auth/register',
        pair,
        servicePhase(service, { ...argon2Load, scenario: register() }),
      ),
    )
    rows.push(figureRow(backend, 'POST /auth/register', run, HASH_LIMIT, ratioTarget('>=', ARGON2_RATIO)))
  }

  if (measures.has('register-floor')) {
    const floor = await startBareLogin(argon2Variables(settings))
    try {
      await warmUp(settings, [{ url: floor.url, shape: argon2Load, scenario: register() }])
      const run = await alternate(settings.pairs, hashCeiling, (pair) =>
        report.figure(REGISTER_FLOOR, pair, servicePhase(floor, { ...argon2Load, scenario: register() })),
      )
      rows.push(figureRow(backend, REGISTER_FLOOR, run, HASH_LIMIT, null))
    } finally {
      await floor.stop()
    }
  }

  if (measures.has('mixed')) {
    const run = await alternate(settings.pairs, verifyCeiling, async (pair) => {
      const phase = await report.figure(
        'POST /auth/login beside GET /auth/me',
        pair,
        mixedPhase(service, {
          durationSeconds: settings.argon2Seconds,
          loginConnections: settings.argon2Connections,
          meConnections: settings.mixedMeConnections,
          login: LOGIN,
          me,
        }),
      )
      report.log('GET /auth/me beside the logins', pair, phase.me)
      return phase
    })
    saturated.push(...run.figures)
    rows.push(figureRow(backend, 'POST /auth/login beside GET /auth/me', run, VERIFY_LIMIT, null))
    rows.push(
      latencyRow(
        backend,
        run.figures.map((figure) => figure.me),
      ),
    )
  }

  if (saturated.length > 0) rows.push(peakRssRow(backend, saturated))
  return rows
}
