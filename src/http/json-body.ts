import type { FastifyInstance } from 'fastify'

/**
 * JSON is the only body type: any other Content-Type is a 415 (docs/api.md R1.3, R1.4, R4.6.2). The parser is Fastify's own, with its
 * __proto__ and constructor poisoning checks set to reject, except that an empty body parses to undefined: logout
 * takes no body, with or without a JSON Content-Type. Routes that need a body still answer 400, from their schema.
 */
export function acceptOnlyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined)
    else parseJson(request, body as string, done)
  })
}
