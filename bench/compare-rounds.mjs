// The rounds of bench:compare: each round measures the limit (bare Fastify, raw Argon2) once, then each build, in an
// order that alternates from round to round (on these machines the service measured second came out about 7 % ahead,
// whichever build it was). Each build's figure is divided by the round's limit; the summary gives each build's median
// ratio and median value, and this build's median ratio ÷ the other's.
import { median } from './pairs.mjs'

/**
 * @typedef {object} Comparison
 * @property {string} figure
 * @property {string} limit what the figure is divided by
 * @property {string} unit '/s' or 'ms'
 * @property {boolean} lowerIsBetter a time (a cold start) rather than a rate
 * @property {string[]} names the builds, this one first
 * @property {number[][]} values each build's figure, round by round
 * @property {number[][]} ratios each build's figure ÷ the round's limit
 */

/**
 * @param {object} plan
 * @param {string} plan.figure
 * @param {string} plan.limit
 * @param {string} plan.unit
 * @param {boolean} plan.lowerIsBetter
 * @param {string[]} plan.names
 * @param {number} plan.rounds
 * @param {(round: number) => Promise<number>} plan.measureLimit
 * @param {(build: number, round: number) => Promise<number>} plan.measure
 * @param {(line: string) => void} log
 * @returns {Promise<Comparison>}
 */
export async function compareRounds(plan, log) {
  const { names, unit } = plan
  /** @type {number[][]} */
  const values = names.map(() => [])
  /** @type {number[][]} */
  const ratios = names.map(() => [])
  for (let round = 0; round < plan.rounds; round++) {
    const limit = await plan.measureLimit(round)
    const order = round % 2 === 0 ? names.map((_, index) => index) : names.map((_, index) => index).reverse()
    const line = [`${plan.figure} round ${round + 1}: ${plan.limit} ${Math.round(limit)}${unit}`]
    for (const index of order) {
      const value = await plan.measure(index, round)
      values[index]?.push(value)
      ratios[index]?.push(value / limit)
      line.push(`${names[index]} ${Math.round(value)}${unit} (${(value / limit).toFixed(3)})`)
    }
    log(line.join(', '))
  }
  return {
    figure: plan.figure,
    limit: plan.limit,
    unit,
    lowerIsBetter: plan.lowerIsBetter,
    names,
    values,
    ratios,
  }
}

/**
 * One line: each build's median ratio (and median value), and this build's ÷ the other's.
 * @param {Comparison} comparison
 */
export function summaryLine(comparison) {
  const { names, unit } = comparison
  const ratios = comparison.ratios.map(median)
  const values = comparison.values.map(median)
  const builds = names.map(
    (name, index) =>
      `${name} ${(ratios[index] ?? Number.NaN).toFixed(3)} (${Math.round(values[index] ?? Number.NaN).toLocaleString('en-US')}${unit})`,
  )
  const quotient = (ratios[0] ?? Number.NaN) / (ratios[1] ?? Number.NaN)
  const better = comparison.lowerIsBetter
    ? 'under 1 means this build starts faster'
    : 'over 1 means this build is faster'
  return (
    `${comparison.figure} ÷ ${comparison.limit}, median of ${comparison.ratios[0]?.length ?? 0} rounds: ` +
    `${builds.join(', ')}; this build ÷ the other ${quotient.toFixed(3)} (${better})`
  )
}
