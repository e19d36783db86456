// The HTTP ceiling: a bare Fastify server (the service's major version, logger off) answering the same small JSON
// as the service's GET /health. Started as its own process, like the service, and ready when it prints the same
// "listening on http://…" line. HOST and PORT come from the environment.
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/health', async () => ({ status: 'ok' }))

const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 0)
const address = await app.listen({ host, port })
process.stdout.write(`${JSON.stringify({ msg: `bare fastify listening on ${address}` })}\n`)

const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  )
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
