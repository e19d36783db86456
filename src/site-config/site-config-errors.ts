import { TesseraError } from '../errors.js'
import { escapeUnprintable } from '../printable.js'
import type { SyntaxProblem } from './parse-site-config-text.js'
import type { SiteConfigError } from './validate-site-config.js'

/**
 * A site configuration file that cannot be read or parsed. The message is one line ready to print, starting with
 * the path (its unprintable characters escaped): `site.json: invalid JSON at line 3, column 5: expected ',' or '}' after the property value, found '"'`.
 */
export class SiteConfigFileError extends TesseraError {
  /** One code for both failures: the file cannot be used as a site configuration at all (the command's exit 2). */
  readonly code = 'site_config_unreadable'
  /** 1-based place of a parse error; undefined for a file that cannot be read. */
  readonly line: number | undefined
  readonly column: number | undefined

  constructor(
    readonly path: string,
    message: string,
    options: { line?: number; column?: number; cause?: unknown } = {},
  ) {
    super(`${escapeUnprintable(path)}: ${message}`, { cause: options.cause })
    this.line = options.line
    this.column = options.column
  }

  /** The file could not be read (missing, a directory, no permission). */
  static unreadable(path: string, cause: unknown): SiteConfigFileError {
    return new SiteConfigFileError(path, `cannot read the file: ${readFailure(cause)}`, { cause })
  }

  /** The file is not valid JSON or YAML. */
  static unparsable(path: string, problem: SyntaxProblem): SiteConfigFileError {
    const { format, message, line, column } = problem
    const place = line === undefined ? '' : ` at line ${line}, column ${column}`
    return new SiteConfigFileError(path, `invalid ${format}${place}: ${message}`, { line, column })
  }
}

/**
 * A site configuration file that parses but does not satisfy the schema (spec 2.6). The message has one line per
 * error, each starting with the path: `site.yaml: /toc/maxLevel must be an integer from 1 to 6, got 7`.
 */
export class SiteConfigInvalidError extends TesseraError {
  readonly code = 'site_config_invalid'

  constructor(
    readonly path: string,
    readonly errors: readonly SiteConfigError[],
  ) {
    super(errors.map((error) => `${escapeUnprintable(path)}: ${error.message}`).join('\n'))
  }
}

const READ_FAILURES: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
}

function readFailure(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException | null)?.code
  return (code && READ_FAILURES[code]) || (cause instanceof Error ? cause.message : String(cause))
}
