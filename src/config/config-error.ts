import { TesseraError } from '../errors.js'

/** A configuration value that cannot be used; the message names the variable. */
export class ConfigError extends TesseraError {
  readonly code = 'config_invalid'

  constructor(
    readonly variable: string,
    /** What is wrong with the value, without the variable's name. */
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${variable} ${problem}`, options)
  }
}
