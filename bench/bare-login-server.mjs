// The login floor: the least a login server can do on these cores. Bare Fastify (the service's major version,
// logger off) whose POST /auth/login reads the JSON body, hands the password to the Argon2 thread with the fewest
// jobs (AUTH_HASH_CONCURRENCY threads, each verifying with the library's synchronous call as the service's do) and
// answers 200 with a body the size of the service's token pair, or 401. No store, no signature, no throttle: what
// separates the service's login from this is what the service does beside the hash. Started as its own process,
// like bare Fastify, with the service's Argon2 variables; ready when it prints its "listening on http://…" line.
import { Worker } from 'node:worker_threads'
import { hash } from '@node-rs/argon2'
import Fastify from 'fastify'
import { argon2Options, BENCH_PASSWORD } from './argon2-options.mjs'

/** @param {string} name @param {number} fallback */
const integer = (name, fallback) => Number(process.env[name] ?? fallback)
const options = argon2Options({
  memoryKiB: integer('AUTH_ARGON2_MEMORY_KIB', 19456),
  timeCost: integer('AUTH_ARGON2_TIME_COST', 2),
  parallelism: integer('AUTH_ARGON2_PARALLELISM', 1),
})
const stored = await hash(BENCH_PASSWORD, options)
/** What a login answers: two tokens of the service's length (about 300 characters each). */
const SESSION = {
  accessToken: 'a'.repeat(300),
  refreshToken: 'r'.repeat(300),
  tokenType: 'Bearer',
  expiresIn: 900,
}

/** @type {Map<number, (ok: boolean) => void>} */
const pending = new Map()
let nextId = 0
const threads = Array.from({ length: integer('AUTH_HASH_CONCURRENCY', 1) }, () => {
  const worker = new Worker(new URL('./bare-login-thread.mjs', import.meta.url))
  const thread = { worker, jobs: 0 }
  worker.on('message', (/** @type {{ id: number, ok: boolean }} */ reply) => {
    thread.jobs--
    pending.get(reply.id)?.(reply.ok)
    pending.delete(reply.id)
  })
  return thread
})
/** @param {string} password @returns {Promise<boolean>} */
const verify = (password) =>
  new Promise((resolve) => {
    const id = nextId++
    const thread = threads.reduce((least, candidate) => (candidate.jobs < least.jobs ? candidate : least))
    pending.set(id, resolve)
    thread.jobs++
    thread.worker.postMessage({ id, stored, password })
  })

const app = Fastify({ logger: false })
app.get('/health', async () => ({ status: 'ok' }))
app.post('/auth/login', async (request, reply) => {
  const body = /** @type {{ password?: unknown }} */ (request.body ?? {})
  if (typeof body.password !== 'string' || !(await verify(body.password))) return reply.code(401).send({})
  return SESSION
})

const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 0)
const address = await app.listen({ host, port })
process.stdout.write(`${JSON.stringify({ msg: `bare login listening on ${address}` })}\n`)

const stop = () => {
  app.close().then(
    () => Promise.all(threads.map(({ worker }) => worker.terminate())).then(() => process.exit(0)),
    () => process.exit(1),
  )
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
