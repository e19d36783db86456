// The refresh floor: the least a refresh server can do on these cores with this stack and the service's durability.
// Bare Fastify (the service's major version, logger off) whose POST /auth/refresh validates its body with the route's
// schema, verifies the HS256 refresh token with fast-jwt (algorithm pinned, as the service verifies), stores the
// rotation single-use and durably (one UPDATE ... WHERE the stored digest is the old token's SHA-256, committed with
// synchronous=FULL through the service's own SQLite writer thread, which commits the writes that arrive together in
// one transaction), signs the new access and refresh tokens with the service's own HS256 signer and answers them in
// the service's envelope, or 401. No throttle, no audit event, no hooks, no session lifetime, no reuse detection:
// what separates the service's refresh from this is what the service does beside the rotation. Its POST /auth/login
// (not measured) starts a chain for any e-mail without a password, so that the benchmark's refresh chains can be made
// as they are for the service. Its SQLite file lives in a directory of its own under the system's temporary directory
// (where the benchmark keeps the service's), removed when it stops; its signing secret is made at start. Started as
// its own process, like bare Fastify; ready when it prints its "listening on http://…" line.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createVerifier } from 'fast-jwt'
import Fastify from 'fastify'

// the built service's modules, as stores.mjs loads its storage: typed from their source, so tsc needs no dist/
const { openSqliteDatabase } = /** @type {typeof import('../src/storage/sqlite/sqlite-database.js')} */ (
  await import(new URL('../dist/storage/sqlite/sqlite-database.js', import.meta.url).href)
)
const { createHs256Signer } = /** @type {typeof import('../src/auth/hs256-signer.js')} */ (
  await import(new URL('../dist/auth/hs256-signer.js', import.meta.url).href)
)

const directory = mkdtempSync(join(tmpdir(), 'tessera-refresh-floor-'))
const secret = randomBytes(32).toString('base64url')
const ACCESS_SECONDS = 900
const REFRESH_SECONDS = 30 * 24 * 3600

// the service's database (its pragmas: WAL, synchronous=FULL; reads here, writes on its thread) with a table of its own
const db = openSqliteDatabase(join(directory, 'floor.db'))
await db.run('CREATE TABLE IF NOT EXISTS floor_sessions (user_id TEXT PRIMARY KEY, digest TEXT NOT NULL)', [])
const sign = createHs256Signer(secret)
const verify = createVerifier({ key: secret, algorithms: ['HS256'], requiredClaims: ['sub', 'exp', 'jti'] })
/** @param {string} token */
const digestOf = (token) => createHash('sha256').update(token).digest('hex')
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

const app = Fastify({ logger: false })
app.get('/health', async () => ({ status: 'ok' }))
app.post(
  '/auth/login',
  { schema: { body: { type: 'object', required: ['email'], properties: { email: { type: 'string' } } } } },
  async (request) => {
    const userId = /** @type {{ email: string }} */ (request.body).email
    const tokens = pair(userId)
    await db.write(
      'INSERT INTO floor_sessions (user_id, digest) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET digest = excluded.digest',
      [userId, digestOf(tokens.refresh_token)],
    )
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
      return reply.code(401).send({ code: 401, message: 'invalid refresh token' })
    }
    if (claims.token_type !== 'Refresh' || typeof claims.sub !== 'string')
      return reply.code(401).send({ code: 401, message: 'invalid refresh token' })
    const tokens = pair(claims.sub)
    const { changes } = await db.write(
      'UPDATE floor_sessions SET digest = ? WHERE user_id = ? AND digest = ?',
      [digestOf(tokens.refresh_token), claims.sub, digestOf(token)],
    )
    if (changes !== 1) return reply.code(401).send({ code: 401, message: 'invalid refresh token' })
    return success(tokens)
  },
)

const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 0)
const address = await app.listen({ host, port })
process.stdout.write(`${JSON.stringify({ msg: `bare refresh listening on ${address}` })}\n`)

/** @param {number} code */
const exit = (code) => {
  rmSync(directory, { recursive: true, force: true })
  process.exit(code)
}
const stop = () => {
  app
    .close()
    .then(() => db.close())
    .then(
      () => exit(0),
      () => exit(1),
    )
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
