// Tokens for the phases, obtained over HTTP outside any measured phase: logging in seeded accounts gives the access
// tokens of GET /auth/me and the first refresh token of each refresh chain.
import { SEED_PASSWORD, seededUser } from './seed.mjs'

/** Logins in flight at once while preparing tokens: well under the service's Argon2 queue limit. */
const PARALLEL_LOGINS = 4

/**
 * Logs in the seeded accounts with the given indexes and returns their token pairs, in order.
 * @param {string} baseUrl
 * @param {number[]} indexes
 * @returns {Promise<Array<{ accessToken: string, refreshToken: string }>>}
 */
export async function loginSeeded(baseUrl, indexes) {
  /** @type {Array<{ accessToken: string, refreshToken: string }>} */
  const pairs = new Array(indexes.length)
  let next = 0
  const worker = async () => {
    while (next < indexes.length) {
      const position = next++
      pairs[position] = await login(baseUrl, seededUser(/** @type {number} */ (indexes[position])).email)
    }
  }
  await Promise.all(Array.from({ length: PARALLEL_LOGINS }, worker))
  return pairs
}

/**
 * `count` indexes spread evenly over `users` seeded accounts, starting at `offset`: different accounts for
 * different pools, never the same one twice within a pool.
 * @param {number} count
 * @param {number} users
 * @param {number} offset
 */
export function spreadIndexes(count, users, offset) {
  const step = Math.max(1, Math.floor(users / count))
  return Array.from({ length: count }, (_, i) => (offset + i * step) % users)
}

/**
 * @param {string} baseUrl
 * @param {string} email
 */
async function login(baseUrl, email) {
  const response = await fetch(`${baseUrl}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: SEED_PASSWORD }),
  })
  const body = /** @type {any} */ (await response.json())
  if (response.status !== 200) {
    throw new Error(`login of ${email} answered ${response.status}: ${JSON.stringify(body)}`)
  }
  return { accessToken: body.data.access_token, refreshToken: body.data.refresh_token }
}
