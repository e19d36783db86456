// The run's progress: each measured phase logged as it ends, a limit's value (A) or a service phase's rate,
// latency, errors and peak RSS (B), so a long run shows what it is doing and a drifting pair can be spotted.
import { errorCount } from './load.mjs'

/**
 * @param {(line: string) => void} log
 * @param {string} prefix the backend, and the store size in the large-store comparison
 */
export function reporter(log, prefix) {
  return {
    /**
     * @template {{ value: number, load?: import('./load.mjs').LoadResult }} L
     * @param {string} name
     * @param {number} pair
     * @param {Promise<L>} phase
     * @returns {Promise<L>}
     */
    async limit(name, pair, phase) {
      const result = await phase
      const load = result.load === undefined ? '' : describeLoad(result.load)
      log(`${prefix} · pair ${pair + 1} · A ${name}: ${Math.round(result.value)}${load}`)
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
     * A load measured beside a figure's, in the same phase.
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
