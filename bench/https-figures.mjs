// GET /auth/me over HTTPS (keep-alive) against the HTTPS ceiling: a bare Fastify server serving HTTPS the way the
// service does (HTTP/2 with HTTP/1.1 for clients that do not offer h2; autocannon speaks HTTP/1.1) with the same
// certificate, answering the same small JSON as GET /health. Alternated in pairs like every other ratio.
import { httpCeiling } from './limits.mjs'
import { alternate } from './pairs.mjs'
import { servicePhase } from './phases.mjs'
import { reporter } from './progress.mjs'
import { figureRow, ratioTarget } from './rows.mjs'
import { authMe, HEALTH, loadShapes, warmUp } from './scenarios.mjs'

export const HTTPS_FIGURE = 'GET /auth/me over HTTPS (keep-alive)'
const HTTPS_LIMIT = 'bare Fastify HTTPS GET req/s'
/** The same target as GET /auth/me over plain HTTP: TLS costs both servers alike. */
const HTTPS_ME_RATIO = 0.45

/**
 * @param {import('./scenarios.mjs').Context} context
 * @param {import('./service-process.mjs').ServerProcess} service the service started with TLS_CERT_FILE
 * @param {import('./service-process.mjs').ServerProcess} bareHttps the bare Fastify server with the same certificate
 * @param {string[]} tokens access tokens, one per connection
 * @returns {Promise<import('./rows.mjs').Row[]>}
 */
export async function benchmarkHttps(context, service, bareHttps, tokens) {
  const { settings, log, backend } = context
  const { http } = loadShapes(settings)
  const me = authMe(tokens)
  log(`${backend}: warming up HTTPS`)
  await warmUp(settings, [
    { url: bareHttps.url, shape: http, scenario: HEALTH },
    { url: service.url, shape: http, scenario: me },
  ])
  const report = reporter(log, backend)
  const run = await alternate(
    settings.pairs,
    (pair) => report.limit(HTTPS_LIMIT, pair, httpCeiling(bareHttps, http)),
    (pair) => report.figure(HTTPS_FIGURE, pair, servicePhase(service, { ...http, scenario: me })),
  )
  return [figureRow(backend, HTTPS_FIGURE, run, HTTPS_LIMIT, ratioTarget('>=', HTTPS_ME_RATIO))]
}
