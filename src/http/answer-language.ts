import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyReply } from 'fastify'
import { negotiateLanguage } from '../language/accept-language.js'

/** docs/api.md R1.16: the language of the answer to a request with these headers (its Accept-Language). */
export function languageOf(headers: IncomingHttpHeaders): string {
  return negotiateLanguage(headers['accept-language'])
}

/**
 * docs/api.md R1.17: the headers of an answer whose text is written in `language`: `Content-Language`, and
 * `Accept-Language` added to whatever `Vary` holds already (`Origin`, from CORS), so that a cache keeps one answer
 * per language.
 */
export function languageHeaders(
  language: string,
  vary: string | number | readonly string[] | undefined,
): { 'content-language': string; vary: string } {
  return { 'content-language': language, vary: varyWith(vary, 'Accept-Language') }
}

/** Marks the answer of `reply` as written in `language` (languageHeaders). */
export function markLanguage(reply: FastifyReply, language: string): FastifyReply {
  return reply.headers(languageHeaders(language, reply.getHeader('vary')))
}

/** A Vary value with `field` in it, once: a value that lists it or is `*` already is kept as it is. */
function varyWith(current: string | number | readonly string[] | undefined, field: string): string {
  const value = (Array.isArray(current) ? current.join(', ') : String(current ?? '')).trim()
  if (value === '') return field
  const fields = value.split(',').map((name) => name.trim().toLowerCase())
  return fields.includes('*') || fields.includes(field.toLowerCase()) ? value : `${value}, ${field}`
}
