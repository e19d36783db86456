import { oneLine, printableLines, quoted } from '../printable.js'
import { loadSiteConfigFile } from '../site-config/load-site-config-file.js'
import { SiteConfigFileError, SiteConfigInvalidError } from '../site-config/site-config-errors.js'
import { parseCommandLine } from './command-line.js'

/** Where a command writes; each call is given whole lines, newline included. */
export interface CommandIo {
  stdout: (text: string) => void
  stderr: (text: string) => void
}

export const SITE_CONFIG_USAGE = `Usage: tessera site-config validate <file>

Checks a site presentation configuration file against its schema (spec 2.6). The extension decides the format:
.json is JSON, .yaml and .yml are YAML; any other file is read as JSON, or as YAML when it is not valid JSON.

Exit codes:
  0  the file is valid ("valid" on stdout)
  1  the file breaks the schema (one line per error on stderr)
  2  the file cannot be read or parsed (line and column on stderr), or a usage error
`

/**
 * `tessera site-config <subcommand>`: `args` are the arguments after `site-config`. Returns the exit code (0 valid,
 * 1 invalid, 2 unreadable, unparsable or usage error) and leaves exiting to the caller.
 */
export async function runSiteConfigCommand(args: readonly string[], io: CommandIo): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(args)
  } catch (error) {
    return usageError(io, (error as Error).message)
  }
  const [subcommand, ...operands] = parsed.positionals
  if (parsed.values.help || subcommand === 'help') {
    io.stdout(SITE_CONFIG_USAGE)
    return 0
  }
  if (subcommand === undefined) return usageError(io, 'missing subcommand')
  if (subcommand !== 'validate') return usageError(io, `unknown subcommand ${quoted(subcommand)}`)
  const [file, extra] = operands
  if (file === undefined) return usageError(io, 'validate needs a <file> argument')
  if (extra !== undefined) return usageError(io, `unexpected argument ${quoted(extra)}`)

  try {
    await loadSiteConfigFile(file)
  } catch (error) {
    if (error instanceof SiteConfigInvalidError) {
      io.stderr(`${printableLines(error.message)}\n`)
      return 1
    }
    if (error instanceof SiteConfigFileError) {
      io.stderr(`${printableLines(error.message)}\n`)
      return 2
    }
    throw error
  }
  io.stdout('valid\n')
  return 0
}

function parse(args: readonly string[]) {
  return parseCommandLine(args, { help: { type: 'boolean', short: 'h' } })
}

function usageError(io: CommandIo, message: string): number {
  io.stderr(`tessera site-config: ${oneLine(message)}\n${SITE_CONFIG_USAGE}`)
  return 2
}
