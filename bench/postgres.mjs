// Whether PostgreSQL and Redis answer, a fresh PostgreSQL database on that server for each store of a run, and a
// unique Redis key prefix; both are removed at the end of the run.
import { Redis } from 'ioredis'
import pg from 'pg'

/** How long the probe waits for each server: they run on this machine or next to it, or not at all. */
export const PROBE_TIMEOUT_MS = 2_000

/**
 * Why PostgreSQL at `databaseUrl` or Redis at `redisUrl` cannot be used (each is asked one query, within a short
 * timeout), or null when both answer.
 * @param {string} databaseUrl
 * @param {string} redisUrl
 * @returns {Promise<string | null>}
 */
export async function unavailable(databaseUrl, redisUrl) {
  const postgres = await withClient(databaseUrl, (client) => client.query('SELECT 1'), PROBE_TIMEOUT_MS).then(
    () => null,
    (error) => `PostgreSQL at ${shown(databaseUrl)} did not answer (${reason(error)})`,
  )
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    commandTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  /** @type {unknown} the connection's own error: the command's is only that the connection closed */
  let connectionError = null
  redis.on('error', (error) => {
    connectionError = error
  })
  const redisAnswer = await redis
    .connect()
    .then(() => redis.ping())
    .then(
      () => null,
      (error) => `Redis at ${shown(redisUrl)} did not answer (${reason(connectionError ?? error)})`,
    )
    .finally(() => redis.disconnect())
  const reasons = [postgres, redisAnswer].filter((text) => text !== null)
  return reasons.length === 0 ? null : reasons.join('; ')
}

/**
 * The URL without its password, to be printed.
 * @param {string} url
 */
export function shown(url) {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.href
  } catch {
    return '(not a URL)'
  }
}

/** @param {unknown} error */
function reason(error) {
  const text = error instanceof Error ? error.message || error.name : String(error)
  return text.split('\n')[0] ?? text
}

/**
 * PostgreSQL and Redis where the settings put them (settings.mjs), once both answer; throws why not.
 * @param {{ databaseUrl: string, redisUrl: string } | null} servers settings.postgres
 * @returns {Promise<{ databaseUrl: string, redisUrl: string }>}
 */
export async function answeringServers(servers) {
  if (servers === null) throw new Error('no PostgreSQL + Redis configured')
  const why = await unavailable(servers.databaseUrl, servers.redisUrl)
  if (why !== null) throw new Error(why)
  return servers
}

/**
 * A store of the service's own on those servers: a fresh database `tessera_bench_<name>` and the Redis key prefix
 * `tessera-bench-<name>:`, with what removes both handed to `removals` (to run once the service is stopped). Returns
 * the database's URL and name, and the service's variables that point at the two.
 * @param {{ databaseUrl: string, redisUrl: string }} servers
 * @param {string} name lower-case letters, digits and underscores, unique to the run
 * @param {Array<() => Promise<unknown>>} removals
 */
export async function serverStore(servers, name, removals) {
  const { databaseUrl: serverUrl, redisUrl } = servers
  const database = `tessera_bench_${name}`
  const databaseUrl = await createDatabase(serverUrl, database)
  removals.push(() => dropDatabase(serverUrl, database))
  const keyPrefix = serverKeyPrefix(redisUrl, name, removals)
  return {
    database,
    databaseUrl,
    variables: { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: keyPrefix },
  }
}

/**
 * A Redis key prefix of the service's own, `tessera-bench-<name>:`, with what deletes its keys handed to `removals`:
 * serverStore's, and the Redis refresh floor's where it has no database.
 * @param {string} redisUrl
 * @param {string} name lower-case letters, digits and underscores, unique to the run
 * @param {Array<() => Promise<unknown>>} removals
 */
export function serverKeyPrefix(redisUrl, name, removals) {
  const keyPrefix = `tessera-bench-${name}:`
  removals.push(() => deleteRedisKeys(redisUrl, keyPrefix))
  return keyPrefix
}

/**
 * Creates a database named `name` on the server of `serverUrl` and returns its URL.
 * @param {string} serverUrl
 * @param {string} name lower-case letters, digits and underscores
 */
export async function createDatabase(serverUrl, name) {
  await withClient(serverUrl, (client) => client.query(`CREATE DATABASE ${identifier(name)}`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.href
}

/**
 * @param {string} serverUrl
 * @param {string} name
 */
export async function dropDatabase(serverUrl, name) {
  await withClient(serverUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${identifier(name)} WITH (FORCE)`),
  )
}

/**
 * Deletes every key under the prefix.
 * @param {string} redisUrl
 * @param {string} prefix
 */
export async function deleteRedisKeys(redisUrl, prefix) {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await redis.connect()
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await redis.del(...keys)
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
}

/**
 * @template T
 * @param {string} serverUrl
 * @param {(client: pg.Client) => Promise<T>} work
 * @param {number} [timeoutMs] for the connection and the query, if they are bounded
 */
async function withClient(serverUrl, work, timeoutMs) {
  const client = new pg.Client({
    connectionString: serverUrl,
    ...(timeoutMs === undefined ? {} : { connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs }),
  })
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** @param {string} name */
function identifier(name) {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`)
  return `"${name}"`
}
