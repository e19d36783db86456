// The service's Argon2id cost as @node-rs/argon2 options: the seeded accounts' hash and the raw Argon2 ceiling are
// computed with exactly what the service uses.

/** @typedef {{ memoryKiB: number, timeCost: number, parallelism: number }} Argon2Cost */

/** @node-rs/argon2 declares Algorithm as an ambient const enum, which isolated modules cannot read. */
const ARGON2ID = /** @type {import('@node-rs/argon2').Algorithm} */ (2)

/** The password of every seeded account, and the one the Argon2 ceiling hashes and verifies. */
export const BENCH_PASSWORD = 'correct horse battery staple'

/**
 * @param {Argon2Cost} cost
 * @returns {import('@node-rs/argon2').Options}
 */
export function argon2Options(cost) {
  return {
    algorithm: ARGON2ID,
    memoryCost: cost.memoryKiB,
    timeCost: cost.timeCost,
    parallelism: cost.parallelism,
  }
}
