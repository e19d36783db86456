import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify'

type Bindings = Parameters<FastifyBaseLogger['child']>[0]
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1]
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/**
 * One log line per request, when it completes, written on the root logger with the request's id (the same line a
 * request's child logger would write). The path is logged without its query string, and no header or body is:
 * tokens and passwords never reach a log line. Errors are logged by the error handler.
 */
export class RequestLogController extends LogController {
  constructor(private readonly logger: FastifyBaseLogger) {
    super()
  }

  override incomingRequest(): void {}

  override requestCompleted(
    _error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    // below LOG_LEVEL (warn, say) the line is not built: its client address alone runs the TRUST_PROXY check
    if (!isEnabled(this.logger, 'info')) return
    this.logger.info(
      {
        [this.requestIdLogLabel]: request.id,
        method: request.method,
        path: request.url.split('?', 1)[0],
        statusCode: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        clientAddress: request.ip,
      },
      'request',
    )
  }
}

/** Whether `logger` writes lines of `level` (pino's isLevelEnabled; a logger without it is taken to write them). */
function isEnabled(logger: FastifyBaseLogger, level: Level): boolean {
  const { isLevelEnabled } = logger as { isLevelEnabled?: (level: Level) => boolean }
  return isLevelEnabled === undefined || isLevelEnabled.call(logger, level)
}

/**
 * `request.log` without a pino child per request: the child (the request id bound) is made the first time something
 * logs through it. Most requests log nothing but their one line, which RequestLogController writes on the root
 * logger, so they never make one; making one for every request cost about 15 % of `GET /auth/me`'s throughput.
 */
export class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  #logger(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options)
    return this.#child
  }

  get level(): string {
    return this.#child?.level ?? this.options?.level ?? this.parent.level
  }

  set level(level: string) {
    this.#logger().level = level
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options)
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args)
  }
  error(...args: unknown[]): void {
    this.#log('error', args)
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args)
  }
  info(...args: unknown[]): void {
    this.#log('info', args)
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args)
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args)
  }
  silent(...args: unknown[]): void {
    this.#log('silent', args)
  }

  #log(level: Level, args: unknown[]): void {
    const logger = this.#logger()
    ;(logger[level] as (...args: unknown[]) => void).apply(logger, args)
  }
}
