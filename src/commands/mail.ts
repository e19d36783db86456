import { normalizeEmail } from '../auth/email.js'
import type { Env } from '../config/env-reader.js'
import { loadConfig } from '../config.js'
import { sendTestMail } from '../mail/test-mail.js'
import { escapeUnprintable, oneLine, quoted } from '../printable.js'
import { CommandUsageError, failureMessage } from './command-errors.js'
import { parseCommandLine } from './command-line.js'

export const MAIL_USAGE = `Usage: tessera mail test <address> [--config <file.json>]

Sends the test message to <address> at once, the way the service sends its mail but not through its outbox, and
prints what became of it:
  - with SMTP_URL, through that server (STARTTLS for smtp://, TLS for smtps://; MAIL_FROM as the sender), printing
    the server's answer, or its refusal;
  - in development without SMTP_URL, written as an .eml file to DATA_DIR/outbox/, printing the file's path.
The text is the \`test\` message of the templates (MAIL_TEMPLATES_DIR, MAIL_PRODUCT_NAME).

Options:
  --config <file.json>   read variables from a JSON object; the environment wins
  -h, --help             show this text

Exit codes: 0 sent (or written); 1 not sent (one line on stderr: the server refused it or could not be reached,
production without SMTP_URL, a MAIL_TEMPLATES_DIR that cannot be used); 2 usage error.
`

/** Where `tessera mail` writes, and where its variables are. */
export interface MailCommandIo {
  stdout(text: string): void
  stderr(text: string): void
  /** The environment, with the variables of the --config file beneath it (config/read-environment.ts). */
  environment(configFile: string | undefined): Promise<Env>
}

interface Invocation {
  address: string
  config: string | undefined
}

/** `tessera mail …`: `args` are the arguments after `mail`. Resolves with the exit code (0, 1 or 2). */
export async function runMailCommand(args: readonly string[], io: MailCommandIo): Promise<number> {
  let invocation: Invocation | 'help'
  try {
    invocation = parseInvocation(args)
  } catch (error) {
    if (!(error instanceof CommandUsageError)) throw error
    io.stderr(`tessera mail: ${oneLine(error.message)}\n${MAIL_USAGE}`)
    return 2
  }
  if (invocation === 'help') {
    io.stdout(MAIL_USAGE)
    return 0
  }
  const fail = (message: string) => {
    io.stderr(`tessera mail: ${oneLine(message)}\n`)
    return 1
  }
  try {
    // the command opens no port: production's HTTPS rule is the service's, not its own
    const config = loadConfig(await io.environment(invocation.config), { listens: false })
    const result = await sendTestMail(config, invocation.address)
    if (result === null)
      return fail('no mail can be sent: SMTP_URL is not set (in production, mail goes by SMTP only)')
    if (!result.delivered)
      return fail(`not sent to ${invocation.address} by ${result.transport}: ${result.reason}`)
    io.stdout(
      result.file === null
        ? `sent to ${invocation.address} by ${result.transport}\nthe server answered: ${escapeUnprintable(result.response)}\n`
        : `written to ${escapeUnprintable(result.file)} (no SMTP_URL: the development outbox)\n`,
    )
    return 0
  } catch (error) {
    return fail(failureMessage(error) ?? (error as Error).message)
  }
}

function parseInvocation(args: readonly string[]): Invocation | 'help' {
  const { values, positionals } = parseCommandLine(args, {
    config: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  })
  const [subcommand, address, extra] = positionals
  if (values.help || subcommand === 'help') return 'help'
  if (subcommand === undefined) throw new CommandUsageError('missing subcommand: test')
  if (subcommand !== 'test') throw new CommandUsageError(`unknown subcommand ${quoted(subcommand)}`)
  if (address === undefined) throw new CommandUsageError('mail test needs the address to send to')
  if (extra !== undefined) throw new CommandUsageError(`unexpected argument ${quoted(extra)}`)
  const normalized = normalizeEmail(address)
  if (normalized === null) throw new CommandUsageError(`${quoted(address)} is not an e-mail address`)
  return { address: normalized, config: values.config }
}
