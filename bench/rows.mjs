// The rows of the run's table, built from measured phases: a figure against its limit, GET /auth/me's latency beside
// saturating logins, GET /health's beside a pipelined flood, the peak RSS under login saturation, the service's cold
// start against bare Fastify's and the run's error count, each with its target if it has one.
import { errorCount } from './load.mjs'
import { median } from './pairs.mjs'

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
 * @property {Target | null} target
 * @property {boolean | null} pass
 * @property {{ limits: number[], figures: Array<Record<string, unknown>> } | null} samples every pair's measurements
 */

/** @typedef {{ op: '>=' | '<=' | '=', value: number, of: 'ratio' | 'value' }} Target */

/** Targets that hold for every backend (issue 5). */
const MIXED_ME_P99_MS = 50
const PEAK_RSS_MIB = 200
/** GET /health's p99 beside the pipelined flood of docs/api.md R8.8 (issue 11). */
const FLOOD_HEALTH_P99_MS = 1_000

/**
 * A target on the ratio, or none.
 * @param {'>=' | '<='} op
 * @param {number | null} value
 * @returns {Target | null}
 */
export function ratioTarget(op, value) {
  return value === null ? null : { op, value, of: 'ratio' }
}

/**
 * Whether `actual` meets the target; null when there is none. A target of the ratio is met by the ratio, any other by
 * the row's value.
 * @param {Target | null} target
 * @param {number} actual
 * @returns {boolean | null}
 */
function meets(target, actual) {
  if (target === null) return null
  if (target.op === '>=') return actual >= target.value
  if (target.op === '<=') return actual <= target.value
  return actual === target.value
}

/**
 * A row from alternated pairs whose B phases are service phases.
 * @param {string} backend
 * @param {string} figure
 * @param {import('./pairs.mjs').Alternated<{ value: number }, import('./phases.mjs').ServicePhase>} run
 * @param {string} limit
 * @param {Target | null} target
 * @returns {Row}
 */
export function figureRow(backend, figure, run, limit, target) {
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
    pass: meets(target, ratio),
    samples: {
      limits: run.limits.map((phase) => phase.value),
      figures: run.figures.map((phase) => ({ peakRssMiB: phase.peakRssMiB, ...phase.load })),
    },
  }
}

/**
 * GET /auth/me's latency beside saturating logins (the mixed run), against its absolute target.
 * @param {string} backend
 * @param {import('./load.mjs').LoadResult[]} loads
 * @returns {Row}
 */
export function latencyRow(backend, loads) {
  const p99 = median(loads.map((load) => load.latencyMs.p99))
  return {
    ...noFigures(backend, 'GET /auth/me p99 beside saturating logins', 'ms', p99),
    p50: median(loads.map((load) => load.latencyMs.p50)),
    p99,
    p99Worst: Math.max(...loads.map((load) => load.latencyMs.p99)),
    errors: sum(loads.map(errorCount)),
    target: { op: '<=', value: MIXED_ME_P99_MS, of: 'value' },
    pass: p99 <= MIXED_ME_P99_MS,
    samples: { limits: [], figures: loads.map((load) => ({ ...load })) },
  }
}

/**
 * GET /health's latency beside the pipelined flood (flood-figures.mjs), against its absolute target: the median of the
 * rounds' p99. The service's peak RSS during the flood is reported beside it; its bound is the test's
 * (test/hostile/pipelining.test.ts).
 * @param {string} backend
 * @param {import('./flood-figures.mjs').FloodRun[]} runs
 * @returns {Row}
 */
export function floodRow(backend, runs) {
  const p99 = median(runs.map((run) => run.p99))
  return {
    ...noFigures(backend, 'GET /health p99 beside a pipelined flood', 'ms', p99),
    p50: median(runs.map((run) => run.p50)),
    p99,
    p99Worst: Math.max(...runs.map((run) => run.p99)),
    errors: sum(runs.map((run) => run.errors)),
    peakRssMiB: Math.max(...runs.map((run) => run.peakRssMiB ?? Number.NaN)),
    target: { op: '<=', value: FLOOD_HEALTH_P99_MS, of: 'value' },
    pass: p99 <= FLOOD_HEALTH_P99_MS,
    samples: {
      limits: [],
      figures: runs.map((run) => ({
        answers: run.latencies.length,
        p50: run.p50,
        p99: run.p99,
        errors: run.errors,
        peakRssMiB: run.peakRssMiB,
      })),
    },
  }
}

/**
 * The highest RSS of the service in the phases where logins saturate Argon2.
 * @param {string} backend
 * @param {import('./phases.mjs').ServicePhase[]} phases
 * @returns {Row}
 */
export function peakRssRow(backend, phases) {
  const peak = Math.max(...phases.map((phase) => phase.peakRssMiB ?? Number.NaN))
  return {
    ...noFigures(backend, 'peak RSS under login saturation', 'MiB', peak),
    peakRssMiB: peak,
    target: { op: '<=', value: PEAK_RSS_MIB, of: 'value' },
    pass: peak <= PEAK_RSS_MIB,
    samples: { limits: [], figures: phases.map((phase) => ({ peakRssMiB: phase.peakRssMiB })) },
  }
}

/**
 * A cold start in ms against bare Fastify's, from alternated pairs, with its target: an upper bound on the ratio
 * (issue 34).
 * @param {string} backend
 * @param {string} figure
 * @param {import('./pairs.mjs').Alternated<{ value: number }, { value: number }>} run
 * @param {string} limit
 * @param {Target | null} target
 * @returns {Row}
 */
export function coldStartRow(backend, figure, run, limit, target) {
  const limits = run.limits.map((phase) => phase.value)
  const figures = run.figures.map((phase) => phase.value)
  return {
    ...noFigures(backend, figure, 'ms', median(figures)),
    limit,
    limitValue: median(limits),
    ratio: run.ratio,
    ratios: run.ratios,
    target,
    pass: meets(target, run.ratio),
    samples: { limits, figures: figures.map((ms) => ({ ms })) },
  }
}

/**
 * The errors of every measured service phase of the run, which must be none.
 * @param {Row[]} rows
 * @returns {Row}
 */
export function errorsRow(rows) {
  const errors = sum(rows.map((row) => row.errors ?? 0))
  return {
    ...noFigures('all', 'errors in every measured service phase', 'errors', errors),
    errors,
    target: { op: '=', value: 0, of: 'value' },
    pass: errors === 0,
  }
}

/**
 * A row with its value only: no latency, errors, memory, limit or target.
 * @param {string} backend
 * @param {string} figure
 * @param {string} unit
 * @param {number} value
 * @returns {Row}
 */
function noFigures(backend, figure, unit, value) {
  return {
    backend,
    figure,
    unit,
    value,
    p50: null,
    p99: null,
    p99Worst: null,
    errors: null,
    peakRssMiB: null,
    limit: null,
    limitValue: null,
    ratio: null,
    ratios: [],
    target: null,
    pass: null,
    samples: null,
  }
}

/** @param {number[]} values */
function sum(values) {
  return values.reduce((total, value) => total + value, 0)
}
