import { TesseraError } from './errors.js'

/**
 * The errors of the operator commands (`tessera users`, `tessera audit`, `tessera store`): each is one line on stderr,
 * and the exit code says which kind it was.
 */

/** A command line that cannot be run as written (an unknown verb, a missing or malformed option): exit 2. */
export class CommandUsageError extends TesseraError {
  readonly code = 'command_usage'
}

/**
 * A command that could not do what it was asked (no such account, a refused password, a store that fails, a copy
 * that does not verify): exit 1. The message says what was done and what was not.
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

/** A failure's message and its cause's, on one line (a StorageError names the operation, its cause the reason). */
export function describeCause(error: unknown): string {
  const parts: string[] = []
  let current: unknown = error
  while (current instanceof Error && parts.length < 3) {
    // a connection refused on every address of a host: the first address's error says it
    if (current instanceof AggregateError && current.message === '' && current.errors.length > 0) {
      current = current.errors[0]
      continue
    }
    if (current.message !== '') parts.push(current.message)
    current = current.cause
  }
  if (parts.length === 0) parts.push(String(error))
  return parts.join(': ').replace(/\s+/g, ' ')
}
