// The refresh floor: the least a refresh server can do on these cores with this stack and the service's store.
// Bare Fastify (the service's major version, logger off) whose POST /auth/refresh validates its body with the route's
// schema, verifies the HS256 refresh token with fast-jwt (algorithm pinned, as the service verifies), stores the
// rotation single-use, signs the new access and refresh tokens with the service's own HS256 signer and answers them
// in the service's envelope, or 401. The rotation replaces the stored digest (SHA-256) of the old token with the new
// one's, only if it is still the old one: by default one UPDATE ... WHERE, committed with synchronous=FULL through
// the service's own SQLite writer thread (which commits the writes that arrive together in one transaction); with
// REDIS_URL, one compare-and-set script in Redis (EVALSHA, under REDIS_KEY_PREFIX), through ioredis with its
// auto-pipelining, as the service keeps sessions there. No throttle, no audit event, no hooks, no session lifetime,
// no reuse detection: what separates the service's refresh from this is what the service does beside the rotation.
// Its POST /auth/login (not measured) starts a chain for any e-mail without a password, so that the benchmark's
// refresh chains can be made as they are for the service. The SQLite file lives in a directory of its own under the
// system's temporary directory (where the benchmark keeps the service's), removed when it stops; the Redis keys are
// the caller's to remove; the signing secret is made at start. Started as its own process, like bare Fastify; ready
// when it prints its "listening on http://…" line.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createVerifier } from 'fast-jwt'
import Fastify from 'fastify'
import { Redis } from 'ioredis'

// the built service's modules, as stores.mjs loads its storage: typed from their source, so tsc needs no dist/
const { openSqliteDatabase } = /** @type {typeof import('../src/storage/sqlite/sqlite-database.js')} */ (
  await import(new URL('../dist/storage/sqlite/sqlite-database.js', import.meta.url).href)
)
const { createHs256Signer } = /** @type {typeof import('../src/auth/hs256-signer.js')} */ (
  await import(new URL('../dist/auth/hs256-signer.js', import.meta.url).href)
)
// the digest under which the service stores a refresh token
const { refreshTokenDigest } = /** @type {typeof import('../src/auth/token-service.js')} */ (
  await import(new URL('../dist/auth/token-service.js', import.meta.url).href)
)

const secret = randomBytes(32).toString('base64url')
const ACCESS_SECONDS = 900
const REFRESH_SECONDS = 30 * 24 * 3600

/**
 * Where the digests are kept: `start` stores a user's, `rotate` replaces it only if it is still `from`.
 * @typedef {object} FloorStore
 * @property {(userId: string, digest: string) => Promise<void>} start
 * @property {(userId: string, from: string, to: string) => Promise<boolean>} rotate
 * @property {() => Promise<void>} close
 */

/**
 * The service's database (its pragmas: WAL, synchronous=FULL; reads here, writes on its thread), a table of its own.
 * @returns {Promise<FloorStore>}
 */
async function sqliteStore() {
  const directory = mkdtempSync(join(tmpdir(), 'tessera-refresh-floor-'))
  const db = openSqliteDatabase(join(directory, 'floor.db'))
  await db.run(
    'CREATE TABLE IF NOT EXISTS floor_sessions (user_id TEXT PRIMARY KEY, digest TEXT NOT NULL)',
    [],
  )
  return {
    async start(userId, digest) {
      await db.write(
        'INSERT INTO floor_sessions (user_id, digest) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET digest = excluded.digest',
        [userId, digest],
      )
    },
    async rotate(userId, from, to) {
      const { changes } = await db.write(
        'UPDATE floor_sessions SET digest = ? WHERE user_id = ? AND digest = ?',
        [to, userId, from],
      )
      return changes === 1
    },
    async close() {
      try {
        await db.close()
      } finally {
        rmSync(directory, { recursive: true, force: true })
      }
    },
  }
}

/**
 * @param {string} url
 * @param {string} prefix
 * @returns {FloorStore}
 */
function redisStore(url, prefix) {
  const redis = new Redis(url, { enableAutoPipelining: true, maxRetriesPerRequest: 1 })
  redis.defineCommand('rotateDigest', {
    numberOfKeys: 1,
    lua: "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end return 0",
  })
  const rotateDigest = /** @type {(key: string, from: string, to: string) => Promise<number>} */ (
    /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (redis)).rotateDigest
  ).bind(redis)
  return {
    async start(userId, digest) {
      await redis.set(`${prefix}floor:${userId}`, digest)
    },
    rotate: async (userId, from, to) => (await rotateDigest(`${prefix}floor:${userId}`, from, to)) === 1,
    async close() {
      await redis.quit()
    },
  }
}

const redisUrl = process.env.REDIS_URL
const store =
  redisUrl === undefined || redisUrl === ''
    ? await sqliteStore()
    : redisStore(redisUrl, process.env.REDIS_KEY_PREFIX ?? 'tessera-refresh-floor:')
const sign = createHs256Signer(secret)
const verify = createVerifier({ key: secret, algorithms: ['HS256'], requiredClaims: ['sub', 'exp', 'jti'] })
/** @param {string} userId */
const pair = (userId) => {
  const iat = Math.floor(Date.now() / 1000)
  return {
    access_token: sign({
      sub: userId,
      token_type: 'Access',
      iat,
      exp: iat + ACCESS_SECONDS,
      jti: randomUUID(),
    }),
    refresh_token: sign({
      sub: userId,
      token_type: 'Refresh',
      iat,
      exp: iat + REFRESH_SECONDS,
      jti: randomUUID(),
    }),
  }
}
/** @param {object} data */
const success = (data) => ({ code: 200, message: 'Success', data })
/** The one refusal: a token that does not verify, is not a refresh token, or is no longer the stored one. */
const REFUSED = { code: 401, message: 'invalid refresh token' }

const app = Fastify({ logger: false })
app.get('/health', async () => ({ status: 'ok' }))
app.post(
  '/auth/login',
  { schema: { body: { type: 'object', required: ['email'], properties: { email: { type: 'string' } } } } },
  async (request) => {
    const userId = /** @type {{ email: string }} */ (request.body).email
    const tokens = pair(userId)
    await store.start(userId, refreshTokenDigest(tokens.refresh_token))
    return success(tokens)
  },
)
app.post(
  '/auth/refresh',
  {
    schema: {
      body: {
        type: 'object',
        required: ['refresh_token'],
        properties: { refresh_token: { type: 'string', minLength: 1, maxLength: 4096 } },
      },
    },
  },
  async (request, reply) => {
    const token = /** @type {{ refresh_token: string }} */ (request.body).refresh_token
    /** @type {{ sub?: unknown, token_type?: unknown, exp?: unknown }} */
    let claims
    try {
      claims = verify(token)
    } catch {
      return reply.code(401).send(REFUSED)
    }
    if (claims.token_type !== 'Refresh' || typeof claims.sub !== 'string')
      return reply.code(401).send(REFUSED)
    const tokens = pair(claims.sub)
    const rotated = await store.rotate(
      claims.sub,
      refreshTokenDigest(token),
      refreshTokenDigest(tokens.refresh_token),
    )
    return rotated ? success(tokens) : reply.code(401).send(REFUSED)
  },
)

const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 0)
const address = await app.listen({ host, port })
process.stdout.write(`${JSON.stringify({ msg: `bare refresh listening on ${address}` })}\n`)

const stop = () => {
  app
    .close()
    .then(() => store.close())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    )
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
