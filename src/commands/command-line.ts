import { type ParseArgsConfig, parseArgs } from 'node:util'
import { oneLine } from '../printable.js'
import { CommandUsageError } from './command-errors.js'

type Options = NonNullable<ParseArgsConfig['options']>

/** What parseArgs gives for `options`, positionals allowed. */
export type ParsedCommandLine<T extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; allowPositionals: true; options: T; strict: true }>
>

/**
 * The command line of a `tessera` command, read by node:util's parseArgs with positionals allowed. Two things differ:
 * a value that starts with a dash, and is no option of the command, is taken as the value of the option before it
 * (`--limit -1` is `--limit=-1`, which the command then refuses for what it is, rather than parseArgs's "argument is
 * ambiguous"; `--user --json` is "--user needs a value"), and a failure is a
 * CommandUsageError whose message is one printable line (an option name holding escape sequences or 100 KB of text
 * is escaped and cut).
 */
export function parseCommandLine<T extends Options>(
  args: readonly string[],
  options: T,
): ParsedCommandLine<T> {
  const takesValue = new Set<string>()
  const known = new Set<string>()
  for (const [name, option] of Object.entries(options)) {
    known.add(`--${name}`)
    if (option.short !== undefined) known.add(`-${option.short}`)
    if (option.type !== 'string') continue
    takesValue.add(`--${name}`)
    if (option.short !== undefined) takesValue.add(`-${option.short}`)
  }
  const isOption = (arg: string) => known.has(arg.split('=')[0] as string)
  const joined: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    const next = args[i + 1]
    if (arg === '--') {
      joined.push(...args.slice(i))
      break
    }
    if (takesValue.has(arg) && next?.startsWith('-')) {
      if (next === '--' || isOption(next)) throw new CommandUsageError(`${arg} needs a value`)
      joined.push(arg.startsWith('--') ? `${arg}=${next}` : `${arg}${next}`)
      i++
    } else joined.push(arg)
  }
  try {
    return parseArgs({ args: joined, allowPositionals: true, options, strict: true })
  } catch (error) {
    throw new CommandUsageError(oneLine(error instanceof Error ? error.message : String(error)))
  }
}
