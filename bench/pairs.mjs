// This machine drifts by ±30 % within minutes, so a figure is never divided by a limit measured at another time: the
// limit (A) and the figure (B) alternate, A B A B …, and the ratio reported is the median of the pairs' ratios.

/**
 * Every pair's limit (A) and figure (B), each pair's ratio B/A, and their median.
 * @template {{ value: number }} L
 * @template {{ value: number }} F
 * @typedef {{ limits: L[], figures: F[], ratios: number[], ratio: number }} Alternated
 */

/**
 * @template {{ value: number }} L
 * @template {{ value: number }} F
 * @param {number} pairs
 * @param {(pair: number) => Promise<L>} measureLimit A
 * @param {(pair: number) => Promise<F>} measureFigure B
 * @returns {Promise<Alternated<L, F>>}
 */
export async function alternate(pairs, measureLimit, measureFigure) {
  /** @type {L[]} */
  const limits = []
  /** @type {F[]} */
  const figures = []
  /** @type {number[]} */
  const ratios = []
  for (let pair = 0; pair < pairs; pair++) {
    const limit = await measureLimit(pair)
    const figure = await measureFigure(pair)
    limits.push(limit)
    figures.push(figure)
    ratios.push(limit.value > 0 ? figure.value / limit.value : Number.NaN)
  }
  return { limits, figures, ratios, ratio: median(ratios) }
}

/** @param {number[]} values */
export function median(values) {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const upper = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
  const lower = sorted[Math.ceil(sorted.length / 2) - 1] ?? Number.NaN
  return (lower + upper) / 2
}
