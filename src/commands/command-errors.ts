import { ConfigError } from '../config/config-error.js'
import { OperationFailedError, type OperationRefusal, TesseraError } from '../errors.js'

/**
 * The errors of the operator commands (`tessera users`, `tessera audit`, `tessera store`): each is one line on stderr,
 * and the exit code says which kind it was.
 */

/** A command line that cannot be run as written (an unknown verb, a missing or malformed option): exit 2. */
export class CommandUsageError extends TesseraError {
  readonly code = 'command_usage'
}

/**
 * A command that could not do what it was asked (a refused password, an unconfirmed deletion, a store of the wrong
 * kind): exit 1. The message says what was done and what was not. What the layers below cannot do they say with an
 * OperationFailedError, which the commands treat alike.
 */
export class CommandFailedError extends TesseraError {
  readonly code = 'command_failed'
}

/** The operator ended a prompt (Ctrl-C, or the end of input) before answering it. */
export class PromptCancelledError extends TesseraError {
  readonly code = 'prompt_cancelled'

  constructor() {
    super('cancelled at the prompt')
  }
}

/**
 * The stderr line of a failure that says its own message: a CommandFailedError, a ConfigError, or an
 * OperationFailedError of a layer below, followed by what `hints` tell the operator about its refusal (the options
 * of the command that override it). Null for any other error, which the command describes itself.
 */
export function failureMessage(
  error: unknown,
  hints: Partial<Record<OperationRefusal, string>> = {},
): string | null {
  if (error instanceof OperationFailedError)
    return error.message + (error.refusal === null ? '' : (hints[error.refusal] ?? ''))
  if (error instanceof CommandFailedError || error instanceof ConfigError) return error.message
  return null
}
