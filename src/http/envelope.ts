import type { AppError } from '../errors.js'
import { english, render } from '../language/catalogues.js'
import type { Message } from '../language/message.js'

/** spec 2.5: the envelope of a successful auth response (`Success` in every language, as the specification writes it). */
export function success<T>(data: T): { code: 200; message: 'Success'; data: T } {
  return { code: 200, message: 'Success', data }
}

/**
 * docs/api.md R1.2: errors use the same envelope, with the HTTP status as `code`; its texts in `language`
 * (docs/api.md §1.5), English by default.
 */
export function failure(
  error: AppError,
  language?: string,
): { code: number; message: string; data: unknown } {
  const write = language === undefined ? english : (text: Message) => render(language, text)
  return { code: error.statusCode, message: write(error.text), data: error.envelopeData(write) }
}
