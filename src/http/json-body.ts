import { isUtf8 } from 'node:buffer'
import type { FastifyInstance } from 'fastify'
import { BodyNotUtf8Error, UnsupportedMediaTypeError } from '../errors.js'

/**
 * JSON is the only body type: any other Content-Type is a 415 (docs/api.md R1.3, R1.4, R4.6.2). The parser is Fastify's own, with its
 * __proto__ and constructor poisoning checks set to reject, except that an empty body parses to undefined: logout
 * takes no body, with or without a JSON Content-Type. Routes that need a body still answer 400, from their schema.
 * The body is read as bytes and must be UTF-8 (RFC 8259 §8.1): decoding other bytes would turn each into U+FFFD,
 * so distinct passwords would become the same string. The check reads the bytes in place, without a copy. A body
 * that declares another charset (`; charset=utf-16`, `latin1`) is a 415 rather than read as UTF-8 against its word.
 */
export function acceptOnlyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer
    if (!declaresUtf8OrNothing(request.headers['content-type']))
      done(new UnsupportedMediaTypeError(), undefined)
    else if (bytes.length === 0) done(null, undefined)
    else if (!isUtf8(bytes)) done(new BodyNotUtf8Error(), undefined)
    else parseJson(request, bytes.toString('utf8'), done)
  })
}

/** The `charset` parameter of a Content-Type, if any (quoted or not). */
const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i

/** RFC 8259 §8.1: JSON between systems is UTF-8. No charset parameter means UTF-8; `utf-8` (any case) or `utf8` is. */
function declaresUtf8OrNothing(contentType: string | undefined): boolean {
  const match = contentType === undefined ? null : CHARSET.exec(contentType)
  if (match === null) return true
  const charset = (match[1] ?? match[2] ?? '').toLowerCase()
  return charset === 'utf-8' || charset === 'utf8'
}
