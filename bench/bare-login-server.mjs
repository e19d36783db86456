// The login and register floors: the least a login or registration server can do on these cores. Bare Fastify (the
// service's major version, logger off) whose POST /auth/login reads the JSON body, verifies the password on the
// service's own Argon2 threads (createArgon2Threads of the built service, AUTH_HASH_CONCURRENCY of them, its
// parameters read as the benchmark reads them) and answers 200 with a body the size of the service's token pair, or
// 401; and whose POST /auth/register hashes the body's password on the same threads with the same parameters and
// answers 201 with that body. No store, no signature, no throttle, no queue in front of the threads: what separates
// the service's login and registration from this is what the service does beside the hash. Started as its own
// process, like bare Fastify; ready when it prints its "listening on http://…" line.
import { hash } from '@node-rs/argon2'
import Fastify from 'fastify'
import { argon2Options, BENCH_PASSWORD } from './argon2-options.mjs'
import { readSettings } from './settings.mjs'

// the built service's module, as stores.mjs loads its storage: typed from its source, so tsc needs no dist/
const { createArgon2Threads } = /** @type {typeof import('../src/auth/argon2-threads.js')} */ (
  await import(new URL('../dist/auth/argon2-threads.js', import.meta.url).href)
)

const { argon2, hashConcurrency } = readSettings([], process.env)
/** Argon2id at the benchmark's cost, with the algorithm always set, as the threads take it. */
const options = /** @type {import('../src/auth/argon2-threads.js').Argon2Options} */ (argon2Options(argon2))
const stored = await hash(BENCH_PASSWORD, options)
const threads = createArgon2Threads(hashConcurrency)
threads.start()
/** What a login answers: two tokens of the service's length (about 300 characters each). */
const SESSION = {
  accessToken: 'a'.repeat(300),
  refreshToken: 'r'.repeat(300),
  tokenType: 'Bearer',
  expiresIn: 900,
}

const app = Fastify({ logger: false })
app.get('/health', async () => ({ status: 'ok' }))
app.post('/auth/login', async (request, reply) => {
  const body = /** @type {{ password?: unknown }} */ (request.body ?? {})
  if (typeof body.password !== 'string' || !(await threads.verify(stored, body.password)))
    return reply.code(401).send({})
  return SESSION
})
app.post('/auth/register', async (request, reply) => {
  const body = /** @type {{ password?: unknown }} */ (request.body ?? {})
  if (typeof body.password !== 'string') return reply.code(400).send({})
  await threads.hash(body.password, options)
  return reply.code(201).send(SESSION)
})

const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 0)
const address = await app.listen({ host, port })
process.stdout.write(`${JSON.stringify({ msg: `bare login listening on ${address}` })}\n`)

const stop = () => {
  app.close().then(
    () => threads.close().then(() => process.exit(0)),
    () => process.exit(1),
  )
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
