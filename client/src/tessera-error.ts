/** One refused field of a 400, as the service names it (docs/api.md R1.6). */
export interface FieldError {
  /** JSON Pointer of the offending value in the body: `/email`, `/password`, `""` for the body itself. */
  field: string
  message: string
}

/**
 * Every failure of the client: an answer of the service that is not a success, a network error (`status` 0), or a
 * call made while logged out (`status` 401, `message` `Not logged in`).
 */
export class TesseraError extends Error {
  /** The HTTP status; 0 when no answer came (network error). */
  readonly status: number
  /** The fields a 400 refused (the envelope's `data.errors`); empty otherwise. */
  readonly errors: FieldError[]
  /**
   * Whether the same call may succeed if tried again later: no answer, a 5xx or a 429. A session is never ended
   * for a retryable failure.
   */
  readonly retryable: boolean
  /**
   * The seconds the service asked to wait before trying again (the answer's `Retry-After`: a 429, such as a code
   * asked for again too soon, or a 503); null when it named none.
   */
  readonly retryAfter: number | null

  constructor(
    status: number,
    message: string,
    errors: FieldError[] = [],
    cause?: unknown,
    retryAfter: number | null = null,
  ) {
    super(message, { cause })
    this.name = 'TesseraError'
    this.status = status
    this.errors = errors
    this.retryable = status === 0 || status === 429 || status >= 500
    this.retryAfter = retryAfter
  }
}
