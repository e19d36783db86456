// The figures of one backend, each alternated with the limit that bounds it, and the comparison of a store of
// 1,000,000 accounts with one of 1,000.
import { loginSeeded, spreadIndexes } from './accounts.mjs'
import { argon2Ceiling, httpCeiling } from './limits.mjs'
import { errorCount, runLoad } from './load.mjs'
import { alternate, median } from './pairs.mjs'
import { mixedPhase, servicePhase } from './phases.mjs'
import { SEED_PASSWORD, seededUser } from './seed.mjs'

/**
 * @typedef {object} Row
 * @property {string} backend
 * @property {string} figure
 * @property {string} unit
 * @property {number} value the median over the pairs
 * @property {number | null} p50 ms, the median over the pairs
 * @property {number | null} p99 ms, the median over the pairs
 * @property {number | null} p99Worst ms, the worst pair
 * @property {number | null} errors summed over every phase of the figure
 * @property {number | null} peakRssMiB the highest of the phases
 * @property {string | null} limit what bounds the figure
 * @property {number | null} limitValue the median over the pairs
 * @property {number | null} ratio the median of the pairs' ratios
 * @property {number[]} ratios every pair's ratio
 * @property {{ op: '>=' | '<=' | '=', value: number, of: 'ratio' | 'value' } | null} target
 * @property {boolean | null} pass
 * @property {{ limits: number[], figures: Array<Record<string, unknown>> } | null} samples every pair's measurements
 */

/**
 * @typedef {object} Context
 * @property {string} backend
 * @property {import('./settings.mjs').Settings} settings
 * @property {import('./service-process.mjs').ServerProcess} bare
 * @property {(line: string) => void} log
 * @property {string} runId
 */

const HEALTH = /** @type {const} */ ({ kind: 'get', path: '/health' })
const BARE_LIMIT = 'bare Fastify GET req/s'
const VERIFY_LIMIT = 'raw Argon2 verify ops/s'
const HASH_LIMIT = 'raw Argon2 hash ops/s'
/** Targets that hold for every backend (issue 5). */
const MIXED_ME_P99_MS = 50
const PEAK_RSS_MIB = 200
const LOGIN = /** @type {const} */ ({ kind: 'login', email: seededUser(0).email, password: SEED_PASSWORD })

/**
 * The figures of one running service (settings.figures), each against its limit. The store holds
 * settings.baselineUsers seeded accounts.
 * @param {Context} context
 * @param {import('./service-process.mjs').ServerProcess} service
 * @param {{ refreshTarget: number | null, meTarget: number | null, figures: import('./settings.mjs').Figure[] }} plan
 * @returns {Promise<Row[]>}
 */
export async function benchmarkService(context, service, plan) {
  const { settings, bare, log, backend } = context
  const users = settings.baselineUsers
  const measures = new Set(plan.figures)
  const http = { connections: settings.httpConnections, durationSeconds: settings.httpSeconds }
  const argon2Load = { connections: settings.argon2Connections, durationSeconds: settings.argon2Seconds }
  const argon2Limit = {
    concurrency: settings.hashConcurrency,
    durationSeconds: settings.argon2Seconds,
    argon2: settings.argon2,
  }
  const meTokens = (await loginSeeded(service.url, spreadIndexes(settings.httpConnections, users, 1))).map(
    (pair) => pair.accessToken,
  )
  const me = /** @type {const} */ ({ kind: 'get', path: '/auth/me', tokens: meTokens })
  const refreshChains = async () =>
    (await loginSeeded(service.url, spreadIndexes(settings.httpConnections, users, 2))).map(
      (pair) => pair.refreshToken,
    )
  let registrations = 0
  const register = () => ({
    kind: /** @type {const} */ ('register'),
    emailPrefix: `bench-${context.runId}-${backend.replace(/\W+/g, '-')}-${registrations++}`,
    password: SEED_PASSWORD,
  })

  log(`${backend}: warming up`)
  const warmup = { durationSeconds: settings.warmupSeconds }
  await runLoad({ url: bare.url, ...http, ...warmup, scenario: HEALTH })
  await runLoad({ url: service.url, ...http, ...warmup, scenario: HEALTH })
  await runLoad({ url: service.url, ...http, ...warmup, scenario: me })
  await runLoad({
    url: service.url,
    ...http,
    ...warmup,
    scenario: { kind: 'refresh', tokens: await refreshChains() },
  })
  await runLoad({ url: service.url, ...argon2Load, ...warmup, scenario: LOGIN })
  if (measures.has('register')) {
    await runLoad({ url: service.url, ...argon2Load, ...warmup, scenario: register() })
  }

  /** @type {Row[]} */
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
    rows.push(row(backend, 'GET /health', run, BARE_LIMIT, null))
  }

  if (measures.has('me')) {
    const run = await alternate(settings.pairs, bareCeiling, (pair) =>
      report.figure('GET /auth/me', pair, servicePhase(service, { ...http, scenario: me })),
    )
    rows.push(row(backend, 'GET /auth/me', run, BARE_LIMIT, ratioTarget('>=', plan.meTarget)))
  }

  if (measures.has('refresh')) {
    // fresh chains before each pair: a phase ends with requests in flight, whose new tokens are never seen
    /** @type {string[]} */
    let chains = []
    const run = await alternate(
      settings.pairs,
      async (pair) => {
        chains = await refreshChains()
        return bareCeiling(pair)
      },
      (pair) =>
        report.figure(
          'POST /auth/refresh',
          pair,
          servicePhase(service, { ...http, scenario: { kind: 'refresh', tokens: chains } }),
        ),
    )
    rows.push(row(backend, 'POST /auth/refresh', run, BARE_LIMIT, ratioTarget('>=', plan.refreshTarget)))
  }

  if (measures.has('login')) {
    const run = await alternate(settings.pairs, verifyCeiling, (pair) =>
      report.figure('POST /auth/login', pair, servicePhase(service, { ...argon2Load, scenario: LOGIN })),
    )
    saturated.push(...run.figures)
    rows.push(row(backend, 'POST /auth/login', run, VERIFY_LIMIT, ratioTarget('>=', 0.9)))
  }

  if (measures.has('register')) {
    const run = await alternate(settings.pairs, hashCeiling, (pair) =>
      report.figure(
        'POST /auth/register',
        pair,
        servicePhase(service, { ...argon2Load, scenario: register() }),
      ),
    )
    rows.push(row(backend, 'POST /auth/register', run, HASH_LIMIT, ratioTarget('>=', 0.9)))
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
    rows.push(row(backend, 'POST /auth/login beside GET /auth/me', run, VERIFY_LIMIT, null))
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

/**
 * The same figures on a store of settings.scaledUsers accounts (B) and of settings.baselineUsers (A), alternated.
 * @param {Context} context
 * @param {import('./service-process.mjs').ServerProcess} small
 * @param {import('./service-process.mjs').ServerProcess} large
 * @returns {Promise<Row[]>}
 */
export async function compareScale(context, small, large) {
  const { settings, log, backend } = context
  const http = { connections: settings.httpConnections, durationSeconds: settings.httpSeconds }
  const argon2Load = { connections: settings.argon2Connections, durationSeconds: settings.argon2Seconds }
  const sizes = [
    { service: small, users: settings.baselineUsers },
    { service: large, users: settings.scaledUsers },
  ]
  const [smallMe, largeMe] = await Promise.all(
    sizes.map(async ({ service, users }) =>
      (await loginSeeded(service.url, spreadIndexes(settings.httpConnections, users, 1))).map(
        (pair) => pair.accessToken,
      ),
    ),
  )
  /** @param {{ service: import('./service-process.mjs').ServerProcess, users: number }} size */
  const chainsOf = async ({ service, users }) =>
    (await loginSeeded(service.url, spreadIndexes(settings.httpConnections, users, 2))).map(
      (pair) => pair.refreshToken,
    )
  const label = `${settings.scaledUsers.toLocaleString('en-US')} accounts`
  const sameAt = `same at ${settings.baselineUsers.toLocaleString('en-US')} accounts`

  log(`${backend}: warming up the two stores`)
  const warmup = { durationSeconds: settings.warmupSeconds }
  for (const [service, tokens] of /** @type {const} */ ([
    [small, smallMe],
    [large, largeMe],
  ])) {
    await runLoad({ url: service.url, ...argon2Load, ...warmup, scenario: LOGIN })
    await runLoad({
      url: service.url,
      ...http,
      ...warmup,
      scenario: { kind: 'get', path: '/auth/me', tokens },
    })
  }

  const report = reporter(log, `${backend} @ ${label}`)
  /**
   * @param {string} figure
   * @param {(service: import('./service-process.mjs').ServerProcess, side: 0 | 1) => Promise<import('./phases.mjs').ServicePhase>} measure
   */
  const sideBySide = (figure, measure) =>
    alternate(
      settings.pairs,
      (pair) => report.limit(`${figure} (${sameAt})`, pair, measure(small, 0)),
      (pair) => report.figure(figure, pair, measure(large, 1)),
    )
  const rows = []
  const login = await sideBySide('POST /auth/login', (service) =>
    servicePhase(service, { ...argon2Load, scenario: LOGIN }),
  )
  rows.push(row(backend, `POST /auth/login @ ${label}`, login, sameAt, ratioTarget('>=', 0.9)))

  const meRun = await sideBySide('GET /auth/me', (service, side) =>
    servicePhase(service, {
      ...http,
      scenario: { kind: 'get', path: '/auth/me', tokens: side === 0 ? smallMe : largeMe },
    }),
  )
  rows.push(row(backend, `GET /auth/me @ ${label}`, meRun, sameAt, ratioTarget('>=', 0.9)))

  // both stores' chains are made before the pair, so that its two phases follow each other closely
  /** @type {string[][]} */
  let chains = [[], []]
  const refresh = await sideBySide('POST /auth/refresh', async (service, side) => {
    if (side === 0) chains = await Promise.all(sizes.map(chainsOf))
    return servicePhase(service, { ...http, scenario: { kind: 'refresh', tokens: chains[side] ?? [] } })
  })
  rows.push(row(backend, `POST /auth/refresh @ ${label}`, refresh, sameAt, ratioTarget('>=', 0.9)))
  return rows
}

/**
 * GET /auth/me's latency beside saturating logins (the mixed run), against its absolute target.
 * @param {string} backend
 * @param {import('./load.mjs').LoadResult[]} loads
 * @returns {Row}
 */
function latencyRow(backend, loads) {
  const p99 = median(loads.map((load) => load.latencyMs.p99))
  return {
    backend,
    figure: 'GET /auth/me p99 beside saturating logins',
    unit: 'ms',
    value: p99,
    p50: median(loads.map((load) => load.latencyMs.p50)),
    p99,
    p99Worst: Math.max(...loads.map((load) => load.latencyMs.p99)),
    errors: sum(loads.map(errorCount)),
    peakRssMiB: null,
    limit: null,
    limitValue: null,
    ratio: null,
    ratios: [],
    target: { op: '<=', value: MIXED_ME_P99_MS, of: 'value' },
    pass: p99 <= MIXED_ME_P99_MS,
    samples: { limits: [], figures: loads.map((load) => ({ ...load })) },
  }
}

/**
 * The highest RSS of the service in the phases where logins saturate Argon2.
 * @param {string} backend
 * @param {import('./phases.mjs').ServicePhase[]} phases
 * @returns {Row}
 */
function peakRssRow(backend, phases) {
  const peak = Math.max(...phases.map((phase) => phase.peakRssMiB ?? Number.NaN))
  return {
    backend,
    figure: 'peak RSS under login saturation',
    unit: 'MiB',
    value: peak,
    p50: null,
    p99: null,
    p99Worst: null,
    errors: null,
    peakRssMiB: peak,
    limit: null,
    limitValue: null,
    ratio: null,
    ratios: [],
    target: { op: '<=', value: PEAK_RSS_MIB, of: 'value' },
    pass: peak <= PEAK_RSS_MIB,
    samples: { limits: [], figures: phases.map((phase) => ({ peakRssMiB: phase.peakRssMiB })) },
  }
}

/**
 * @param {'>=' | '<='} op
 * @param {number | null} value
 */
function ratioTarget(op, value) {
  return value === null ? null : { op, value, of: /** @type {const} */ ('ratio') }
}

/**
 * A table row from alternated pairs whose B phases are service phases.
 * @param {string} backend
 * @param {string} figure
 * @param {{ limits: Array<{ value: number }>, figures: import('./phases.mjs').ServicePhase[], ratios: number[],
 *   ratio: number }} run
 * @param {string} limit
 * @param {Row['target']} target
 * @returns {Row}
 */
function row(backend, figure, run, limit, target) {
  const loads = run.figures.map((phase) => phase.load)
  const ratio = run.ratio
  return {
    backend,
    figure,
    unit: 'req/s',
    value: median(run.figures.map((phase) => phase.value)),
    p50: median(loads.map((load) => load.latencyMs.p50)),
    p99: median(loads.map((load) => load.latencyMs.p99)),
    p99Worst: Math.max(...loads.map((load) => load.latencyMs.p99)),
    errors: sum(loads.map(errorCount)),
    peakRssMiB: Math.max(...run.figures.map((phase) => phase.peakRssMiB ?? Number.NaN)),
    limit,
    limitValue: median(run.limits.map((phase) => phase.value)),
    ratio,
    ratios: run.ratios,
    target,
    pass: target === null ? null : target.op === '>=' ? ratio >= target.value : ratio <= target.value,
    samples: {
      limits: run.limits.map((phase) => phase.value),
      figures: run.figures.map((phase) => ({ peakRssMiB: phase.peakRssMiB, ...phase.load })),
    },
  }
}

/**
 * Logs each measured phase as it ends: a limit's value, a service phase's rate, latency, errors and peak RSS.
 * @param {(line: string) => void} log
 * @param {string} prefix
 */
function reporter(log, prefix) {
  return {
    /**
     * @template {{ value: number }} L
     * @param {string} name
     * @param {number} pair
     * @param {Promise<L>} phase
     * @returns {Promise<L>}
     */
    async limit(name, pair, phase) {
      const result = await phase
      const load = /** @type {{ load?: import('./load.mjs').LoadResult }} */ (result).load
      log(
        `${prefix} · pair ${pair + 1} · A ${name}: ${Math.round(result.value)}${load ? describeLoad(load) : ''}`,
      )
      return result
    },
    /**
     * @template {import('./phases.mjs').ServicePhase} P
     * @param {string} name
     * @param {number} pair
     * @param {Promise<P>} phase
     * @returns {Promise<P>}
     */
    async figure(name, pair, phase) {
      const result = await phase
      const rss = result.peakRssMiB === null ? '' : `, peak RSS ${result.peakRssMiB.toFixed(0)} MiB`
      log(
        `${prefix} · pair ${pair + 1} · B ${name}: ${Math.round(result.value)} req/s${describeLoad(result.load)}${rss}`,
      )
      return result
    },
    /**
     * @param {string} name
     * @param {number} pair
     * @param {import('./load.mjs').LoadResult} load
     */
    log(name, pair, load) {
      log(
        `${prefix} · pair ${pair + 1} · B ${name}: ${Math.round(load.requestsPerSecond)} req/s${describeLoad(load)}`,
      )
    },
  }
}

/** @param {import('./load.mjs').LoadResult} load */
function describeLoad(load) {
  return `, p50 ${load.latencyMs.p50} ms, p99 ${load.latencyMs.p99} ms, ${errorCount(load)} errors`
}

/** @param {number[]} values */
function sum(values) {
  return values.reduce((total, value) => total + value, 0)
}
