// Tokens for the phases, obtained over HTTP outside any measured phase: logging in seeded accounts gives the access
// tokens of GET /auth/me and the first refresh token of each refresh chain.
import { BENCH_PASSWORD } from './argon2-options.mjs'
import { requestText } from './http-client.mjs'
import { seededUser } from './seed.mjs'

/** Logins in flight at once while preparing tokens: well under the service's Argon2 queue limit. */
const PARALLEL_LOGINS = 4

/** @typedef {{ accessToken: string, refreshToken: string }} TokenPair */

/**
 * Access tokens of `count` different seeded accounts (of the first `users`), for GET /auth/me. Services that share a
 * store take different pools: each pool is a different set of accounts (while 2 × pools < users ÷ count).
 * @param {string} baseUrl
 * @param {number} count
 * @param {number} users
 * @param {number} [pool]
 */
export async function accessTokens(baseUrl, count, users, pool = 0) {
  return (await loginSeeded(baseUrl, spreadIndexes(count, users, 1 + 2 * pool))).map(
    (pair) => pair.accessToken,
  )
}

/**
 * The first refresh tokens of `count` chains, each of a different seeded account, none of which gives the access
 * tokens of accessTokens(). A chain is used by one phase only: its last token is in flight when the phase ends.
 * Services that share a store take different pools, so that a login on one never ends a session the other's chains
 * rotate (one session per account by default).
 * @param {string} baseUrl
 * @param {number} count
 * @param {number} users
 * @param {number} [pool]
 */
export async function refreshChains(baseUrl, count, users, pool = 0) {
  return (await loginSeeded(baseUrl, spreadIndexes(count, users, 2 + 2 * pool))).map(
    (pair) => pair.refreshToken,
  )
}

/**
 * Logs in the seeded accounts with the given indexes and returns their token pairs, in order.
 * @param {string} baseUrl
 * @param {number[]} indexes
 * @returns {Promise<TokenPair[]>}
 */
async function loginSeeded(baseUrl, indexes) {
  /** @type {TokenPair[]} */
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
function spreadIndexes(count, users, offset) {
  const step = Math.max(1, Math.floor(users / count))
  return Array.from({ length: count }, (_, i) => (offset + i * step) % users)
}

/**
 * @param {string} baseUrl
 * @param {string} email
 * @returns {Promise<TokenPair>}
 */
async function login(baseUrl, email) {
  const response = await requestText(`${baseUrl}/auth/login`, { json: { email, password: BENCH_PASSWORD } })
  const body = /** @type {{ data?: { access_token?: unknown, refresh_token?: unknown } } | null} */ (
    JSON.parse(response.text)
  )
  const accessToken = body?.data?.access_token
  const refreshToken = body?.data?.refresh_token
  if (response.status !== 200 || typeof accessToken !== 'string' || typeof refreshToken !== 'string') {
    throw new Error(`login of ${email} answered ${response.status}: ${JSON.stringify(body)}`)
  }
  return { accessToken, refreshToken }
}
