import { describeCause } from '../errors.js'
import { oneLine, quoted } from '../printable.js'
import {
  enableWebhookUrl,
  findWebhookTarget,
  listWebhookUrls,
  pingWebhookUrls,
} from '../webhooks/webhook-admin.js'
import { CommandFailedError, CommandUsageError } from './command-errors.js'
import { parseCommandLine } from './command-line.js'
import { runOnStores, type StoresCommandIo } from './runner.js'

export const WEBHOOKS_USAGE = `Usage: tessera webhooks list|test|enable <url|position> [--config <file.json>]

The webhooks of the service (WEBHOOK_URLS, WEBHOOK_SECRET): each URL is named by its position in WEBHOOK_URLS (1 for
the first), never shown, since it may carry credentials.

Subcommands:
  list                   each URL's position, whether a 410 Gone disabled it (and when), and the events waiting for it
  test                   post a signed \`ping\` event to each URL now (not through the outbox), disabled ones too, and
                         print what each answered
  enable <url|position>  enable a URL a 410 disabled: events are queued and delivered to it again (every instance
                         follows within a few seconds)

Options:
  --config <file.json>   read variables from a JSON object; the environment wins
  -h, --help             show this text

Exit codes: 0 done (test: every URL answered 2xx); 1 failed (one line on stderr: no WEBHOOK_URLS, a URL not in them,
a store that fails; test: a URL that did not answer 2xx); 2 usage error.
`

export interface WebhooksCommandIo extends StoresCommandIo {
  /** Given whole lines, newline included. */
  stdout(text: string): void
}

type Invocation =
  | { subcommand: 'list' | 'test'; config: string | undefined }
  | { subcommand: 'enable'; url: string; config: string | undefined }

/** `tessera webhooks …`: `args` are the arguments after `webhooks`. Resolves with the exit code (0, 1 or 2). */
export async function runWebhooksCommand(args: readonly string[], io: WebhooksCommandIo): Promise<number> {
  let invocation: Invocation | 'help'
  try {
    invocation = parseInvocation(args)
  } catch (error) {
    if (!(error instanceof CommandUsageError)) throw error
    io.stderr(`tessera webhooks: ${oneLine(error.message)}\n${WEBHOOKS_USAGE}`)
    return 2
  }
  if (invocation === 'help') {
    io.stdout(WEBHOOKS_USAGE)
    return 0
  }
  const command = invocation
  let unanswered = 0
  const code = await runOnStores(
    'webhooks',
    io,
    {
      configFile: command.config,
      // the outbox and the disabled URLs are in the SQL database whatever REDIS_URL says
      storage: (config) => ({ ...config.storage, redisUrl: null }),
      describeFailure: (error) => `the store failed: ${describeCause(error)}`,
    },
    async (stores, config) => {
      if (config.webhooks.urls.length === 0)
        throw new CommandFailedError('WEBHOOK_URLS is not set: the service sends no webhooks')
      if (command.subcommand === 'list') {
        const now = io.clock.now()
        for (const url of await listWebhookUrls(config.webhooks, stores)) {
          const state =
            url.disabledAt === null
              ? 'enabled'
              : `disabled since ${new Date(url.disabledAt).toISOString()} (410)`
          const waiting =
            url.oldestCreatedAt === null
              ? 'no event waiting'
              : `${url.queued} waiting, the oldest for ${Math.round((now - url.oldestCreatedAt) / 1000)} s`
          io.stdout(`${url.position}  ${state}  ${waiting}\n`)
        }
      } else if (command.subcommand === 'test') {
        for (const outcome of await pingWebhookUrls(
          config.webhooks,
          stores,
          io.clock,
          config.http.basePath,
        )) {
          const disabled = outcome.disabled ? ' (disabled)' : ''
          io.stdout(
            `${outcome.position}${disabled}  ${outcome.delivered ? 'delivered' : 'failed'}: ${outcome.reason}\n`,
          )
          if (!outcome.delivered) unanswered++
        }
      } else if (command.subcommand === 'enable') {
        const target = findWebhookTarget(config.webhooks, command.url)
        if (target === null)
          throw new CommandFailedError('that URL is not in WEBHOOK_URLS (give it, or its position)')
        const enabled = await enableWebhookUrl(target, stores)
        io.stdout(
          enabled
            ? `URL ${target.position} enabled: events are queued for it again\n`
            : `URL ${target.position} was not disabled\n`,
        )
      }
    },
  )
  if (code !== 0) return code
  if (unanswered > 0) {
    io.stderr(`tessera webhooks: ${unanswered} of the URLs did not answer 2xx\n`)
    return 1
  }
  return 0
}

function parseInvocation(args: readonly string[]): Invocation | 'help' {
  const { values, positionals } = parseCommandLine(args, {
    config: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  })
  const [subcommand, url, extra] = positionals
  if (values.help || subcommand === 'help') return 'help'
  if (subcommand === undefined) throw new CommandUsageError('missing subcommand: list, test or enable')
  if (subcommand === 'enable') {
    if (url === undefined) throw new CommandUsageError('webhooks enable needs the URL, or its position')
    if (extra !== undefined) throw new CommandUsageError('unexpected argument after the URL')
    return { subcommand, url, config: values.config }
  }
  if (subcommand !== 'list' && subcommand !== 'test')
    throw new CommandUsageError(`unknown subcommand ${quoted(subcommand)}`)
  // a URL is never quoted back: it may carry credentials
  if (url !== undefined) throw new CommandUsageError(`webhooks ${subcommand} takes no argument`)
  return { subcommand, config: values.config }
}
