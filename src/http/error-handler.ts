import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import {
  AppError,
  BadRequestError,
  InternalError,
  MalformedBodyError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceBusyError,
  StorageError,
  UnsupportedMediaTypeError,
  WriteOutcomeUnknownError,
} from '../errors.js'
import { languageOf, markLanguage } from './answer-language.js'
import { failure } from './envelope.js'

/** Fastify's own errors that have a service error of their own. */
const FASTIFY_ERRORS: Readonly<Record<string, () => AppError>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => new MalformedBodyError(),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new MalformedBodyError(),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new PayloadTooLargeError(),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new UnsupportedMediaTypeError(),
}

/** Any thrown value as the AppError the client is told about; unknown failures become a generic 500. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error
  // docs/api.md R7.3: a 500 means "not done"; a write that may have been done is a 503 of its own
  if (error instanceof StorageError && error.outcomeUnknown) return new WriteOutcomeUnknownError(error)
  const fastifyError = error as Partial<FastifyError> | null
  const known = fastifyError?.code ? FASTIFY_ERRORS[fastifyError.code] : undefined
  if (known) return known()
  // the JSON parser's SyntaxError (bad JSON, forbidden __proto__ or constructor key) carries status 400
  if (error instanceof SyntaxError && fastifyError?.statusCode === 400) return new MalformedBodyError(error)
  const status = fastifyError?.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new BadRequestError(status, error)
  }
  return new InternalError(error)
}

/**
 * Refusals the service gives by design under load (a full Argon2 queue, a rate limit): the request's own log line says
 * all there is, so a flood of them writes one short line each (docs/api.md §6).
 */
function isExpectedRefusal(error: AppError): boolean {
  return error.statusCode === 429 || error instanceof ServiceBusyError
}

/**
 * The one place errors become responses: the envelope in the request's language (docs/api.md §1.5), the error's
 * headers, and a log line with the stack for every 5xx but an expected refusal.
 */
export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appError = toAppError(error)
  if (isExpectedRefusal(appError)) {
    // nothing more than the request line
  } else if (appError.statusCode >= 500) {
    request.log.error({ err: appError.cause ?? error, code: appError.code }, appError.message)
  } else if (appError.cause !== undefined) {
    request.log.debug({ err: appError.cause, code: appError.code }, appError.message)
  }
  const language = languageOf(request.headers)
  return markLanguage(reply.code(appError.statusCode).headers(appError.headers), language).send(
    failure(appError, language),
  )
}

/**
 * Fastify's frameworkErrors handler (a path with broken percent-encoding, docs/api.md R1.13): such a request reaches
 * no hook, so the header every answer carries (R1.11) is set here.
 */
export function handleFrameworkError(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  reply.header('x-content-type-options', 'nosniff')
  return handleError(error, request, reply)
}

/** handleFrameworkError, telling `onAnswer` the status of its answer (the metrics, docs/api.md R6.2.7). */
export function countingFrameworkErrors(onAnswer: (status: number) => void) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const answered = handleFrameworkError(error, request, reply)
    onAnswer(reply.statusCode)
    return answered
  }
}

/**
 * 404 for an unknown path, 405 (with Allow) for a known path and another method. `methodsByPath` is filled as the
 * routes are registered; a route's `:parameter` segment matches any one segment (`/auth/sessions/:id`).
 */
export function createNotFoundHandler(methodsByPath: ReadonlyMap<string, ReadonlySet<string>>) {
  // listed at the first request that matches no route, once every route is registered: not again per 404
  let parametric: string[] | null = null
  const templates = () => {
    parametric ??= [...methodsByPath.keys()].filter((route) => route.includes(':'))
    return parametric
  }
  const methodsOf = (path: string): ReadonlySet<string> | undefined => {
    const exact = methodsByPath.get(path)
    if (exact !== undefined) return exact
    const segments = path.split('/')
    const route = templates().find((template) => {
      const parts = template.split('/')
      return (
        parts.length === segments.length &&
        parts.every((part, index) =>
          part.startsWith(':') ? segments[index] !== '' : part === segments[index],
        )
      )
    })
    return route === undefined ? undefined : methodsByPath.get(route)
  }
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = request.url.split('?', 1)[0] ?? ''
    const methods = methodsOf(path)
    return handleError(
      methods ? new MethodNotAllowedError([...methods].sort()) : new NotFoundError(),
      request,
      reply,
    )
  }
}

/**
 * docs/api.md R1.10: an OPTIONS request that is no CORS preflight (it lacks Origin or Access-Control-Request-Method)
 * is answered as any method a path does not serve, by `notFound`, before @fastify/cors answers it in plain text.
 */
export function createOptionsHook(notFound: (request: FastifyRequest, reply: FastifyReply) => FastifyReply) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const { headers } = request
    if (request.method === 'OPTIONS' && !(headers.origin && headers['access-control-request-method'])) {
      notFound(request, reply)
      return
    }
    done()
  }
}
