import type { FastifyInstance } from 'fastify'

/**
 * Fastify's JSON parser (with its __proto__ and constructor poisoning checks set to reject), except that an empty
 * body parses to undefined instead of failing: logout takes no body, with or without a JSON Content-Type
 * (DECISIONS). Routes that need a body still answer 400, from their schema.
 */
export function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined)
    else parseJson(request, body as string, done)
  })
}
