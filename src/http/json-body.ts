import { isUtf8 } from 'node:buffer'
import type { FastifyInstance } from 'fastify'
import { BodyNotUtf8Error } from '../errors.js'

/**
 * JSON is the only body type: any other Content-Type is a 415 (docs/api.md R1.3, R1.4, R4.6.2). The parser is Fastify's own, with its
 * __proto__ and constructor poisoning checks set to reject, except that an empty body parses to undefined: logout
 * takes no body, with or without a JSON Content-Type. Routes that need a body still answer 400, from their schema.
 * The body is read as bytes and must be UTF-8 (RFC 8259 §8.1): decoding other bytes would turn each into U+FFFD,
 * so distinct passwords would become the same string. The check reads the bytes in place, without a copy.
 */
export function acceptOnlyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer
    if (bytes.length === 0) done(null, undefined)
    else if (!isUtf8(bytes)) done(new BodyNotUtf8Error(), undefined)
    else parseJson(request, bytes.toString('utf8'), done)
  })
}
