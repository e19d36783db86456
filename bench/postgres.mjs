// A fresh PostgreSQL database on the server of BENCH_POSTGRES_URL for each store of a run, and a unique Redis key
// prefix; both are removed at the end of the run.
import { Redis } from 'ioredis'
import pg from 'pg'

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
 */
async function withClient(serverUrl, work) {
  const client = new pg.Client({ connectionString: serverUrl })
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
