import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { type AppError, BadRequestError, PayloadTooLargeError } from '../errors.js'
import { languageHeaders, languageOf } from './answer-language.js'
import { failure } from './envelope.js'

/**
 * The answers Node's HTTP parser gives before any route (docs/api.md R1.2 and §1.3): a bad request line or header,
 * two Content-Length headers, a body shorter than its Content-Length are 400; headers over Node's limit 431; a request
 * slower than REQUEST_TIMEOUT_MS or HEADERS_TIMEOUT_MS 408; chunk extensions over Node's limit 413.
 */
const STATUS_BY_PARSER_ERROR: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
}

/**
 * Fastify's clientErrorHandler: an error of Node's HTTP parser is answered with the envelope, as a complete response
 * written to the socket, which is then closed. Other errors of the connection (a reset, a failed TLS handshake) get
 * no answer: the peer could not read one. Returns the status answered, or null when there was no answer.
 */
export function handleClientError(
  this: Pick<FastifyInstance, 'log'>,
  error: Error & { code?: string },
  socket: Socket,
): number | null {
  const code = error.code ?? ''
  const parserError = code.startsWith('HPE_') || code in STATUS_BY_PARSER_ERROR
  // as Node does: no answer once one has begun on this connection, or the client would read it as part of that one
  const answering = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  let answered: number | null = null
  if (parserError && socket.writable && answering?.headersSent !== true) {
    const answer = parserErrorAnswer(code)
    socket.write(rawResponse(answer))
    answered = answer.statusCode
    this.log.debug({ code }, 'request refused by the HTTP parser')
  }
  socket.destroy()
  return answered
}

/** handleClientError, telling `onAnswer` the status of each answer it gives (the metrics, docs/api.md R6.2.7). */
export function countingClientErrors(onAnswer: (status: number) => void) {
  return function (
    this: Pick<FastifyInstance, 'log'>,
    error: Error & { code?: string },
    socket: Socket,
  ): void {
    const status = handleClientError.call(this, error, socket)
    if (status !== null) onAnswer(status)
  }
}

/** The error the envelope reports for an error code of Node's HTTP parser. */
export function parserErrorAnswer(code: string): AppError {
  const status = STATUS_BY_PARSER_ERROR[code] ?? 400
  if (status === 413) return new PayloadTooLargeError()
  return new BadRequestError(status)
}

/**
 * A complete HTTP/1.1 response carrying the envelope of `error`, after which the connection closes. It is written
 * in English: Node's parser hands over no request whose Accept-Language could be read (docs/api.md R1.17).
 */
export function rawResponse(error: AppError): string {
  const body = JSON.stringify(failure(error))
  const head = [
    `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'x-content-type-options: nosniff',
    ...Object.entries(error.headers).map(([name, value]) => `${name}: ${value}`),
    'connection: close',
  ]
  return `${head.join('\r\n')}\r\n\r\n${body}`
}

/**
 * Answers a request with the envelope of `error` without Fastify, in the request's language, and closes the
 * connection after it.
 */
export function answerWithoutRoute(
  request: IncomingMessage,
  response: ServerResponse,
  error: AppError,
): void {
  const language = languageOf(request.headers)
  const body = JSON.stringify(failure(error, language))
  response.shouldKeepAlive = false
  response.writeHead(error.statusCode, {
    ...error.headers,
    ...languageHeaders(language, response.getHeader('vary')),
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-content-type-options': 'nosniff',
    connection: 'close',
  })
  // a body the request may carry is not read: the connection closes after this answer
  response.end(request.method === 'HEAD' ? undefined : body)
}
