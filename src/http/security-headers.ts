import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpsRequiredError } from '../errors.js'

/** One year, and no includeSubDomains: the service cannot know whether its parent domain's other hosts speak HTTPS. */
const HSTS = 'max-age=31536000'

/** Whether the request reached the service over HTTPS: its own TLS, or a trusted proxy's X-Forwarded-Proto. */
function isHttps(request: FastifyRequest): boolean {
  // Fastify believes X-Forwarded-Proto only from a TRUST_PROXY peer, like X-Forwarded-For (R8.3)
  return request.protocol?.toLowerCase() === 'https'
}

/**
 * docs/api.md R1.11 and R5.7.3: `X-Content-Type-Options: nosniff` on every answer, and `Strict-Transport-Security`
 * on every answer given over HTTPS, so that a browser that once reached the service over HTTPS never again sends it
 * a token in clear. Registered first, as a root hook, so 404s and errors carry them too.
 */
export function addSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff')
    if (isHttps(request)) reply.header('strict-transport-security', HSTS)
    done()
  })
}

/**
 * The hook of the endpoints that take or give credentials (register, login, refresh, logout, me):
 * `Cache-Control: no-store` on every answer (RFC 6749 §5.1: tokens and account data are kept by no cache), and,
 * when `httpsOnly` (production behind TRUST_PROXY), a 403 for a request that did not arrive over HTTPS (R5.7.2)
 * before anything else looks at it.
 */
export function createCredentialsHook(options: { httpsOnly: boolean }) {
  const { httpsOnly } = options
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    reply.header('cache-control', 'no-store')
    if (httpsOnly && !isHttps(request)) {
      done(new HttpsRequiredError())
      return
    }
    done()
  }
}

/**
 * A Content-Security-Policy for a page served with its own files (/docs, /demo): scripts, styles, images and
 * requests from this origin only, no inline script, no `<base>`, no form that submits anywhere, no framing.
 * `styleSources` adds to `'self'` (a hash of an inline style the page cannot do without).
 */
export function ownFilesOnlyPolicy(styleSources: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    ["style-src 'self'", ...styleSources].join(' '),
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}
