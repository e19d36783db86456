import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'

/**
 * One log line per request, when it completes. The path is logged without its query string, and no header or body
 * is: tokens and passwords never reach a log line. Errors are logged by the error handler.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    _error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    request.log.info(
      {
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
