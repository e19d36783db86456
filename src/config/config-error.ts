import { TesseraError } from '../errors.js'

/** A configuration value that cannot be used; the message names the variable. */
export class ConfigError extends TesseraError {
  readonly code = 'config_invalid'

  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable} ${message}`)
  }
}
