// The HTTP ceiling: a bare Fastify server (the service's major version, logger off) answering the same small JSON
// as the service's GET /health. Started as its own process, like the service, and ready when it prints the same
// "listening on http://…" line. HOST and PORT come from the environment; with TLS_CERT_FILE and TLS_KEY_FILE it is
// the HTTPS ceiling, served the way the service serves HTTPS (HTTP/2 with HTTP/1.1 for clients that do not offer h2).
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

const certFile = process.env.TLS_CERT_FILE
const keyFile = process.env.TLS_KEY_FILE
// typed as the HTTP/1.1 instance: the one route uses nothing the two server types do not share
const app =
  certFile !== undefined && keyFile !== undefined
    ? /** @type {import('fastify').FastifyInstance} */ (
        /** @type {unknown} */ (
          Fastify({
            logger: false,
            http2: true,
            https: { allowHTTP1: true, cert: readFileSync(certFile), key: readFileSync(keyFile) },
          })
        )
      )
    : Fastify({ logger: false })
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
