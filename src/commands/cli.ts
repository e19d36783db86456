import { readAppInfo } from '../app-info.js'
import { systemClock } from '../clock.js'
import { readEnvironment } from '../config/read-environment.js'
import { oneLine, quoted } from '../printable.js'
import { parseCommandLine } from './command-line.js'

const USAGE = `Usage: tessera <command> [options]

Commands:
  serve                      start the HTTP service (configuration from environment variables)
  migrate                    apply pending database migrations and exit
  site-config validate <f>   check a site configuration file (JSON or YAML); see tessera site-config --help
  users list|show <email|id> the accounts, or one with whether a refresh token is stored; see tessera users --help
  users reset-password <e>   set a user's password (asked without echo, or read from stdin) and log the user out
  users revoke|delete <e>    log a user out (delete the stored refresh token), or delete the account
  users set-role <e> <role>  give a role (its tokens carry it from the next login); disable|enable <e> stop or allow logins
  store copy                 copy accounts and refresh tokens between stores; see tessera store --help
  store backup <file>        a consistent copy of the SQLite store while the service runs
  audit --user <email|id>    a user's security events from the audit trail; see tessera audit --help
  keys generate              write a key pair for EdDSA or ES256 access tokens; see tessera keys --help
  mail test <address>        send the test message now (SMTP_URL, or an .eml file); see tessera mail --help
  webhooks list|test|enable  the webhook URLs: their state, a signed ping to each, enable one a 410 disabled
  help                       show this text

Options:
  --config <file.json>       read variables from a JSON object; the environment wins
  -h, --help                 show this text
  -v, --version              print the version

Main environment variables:
  NODE_ENV                   development (default), test or production
  HOST, PORT                 where to listen (0.0.0.0, 3000)
  DATABASE_URL               sqlite:<file> (default sqlite:./data/app.db), postgres://… or mysql://…
  REDIS_URL                  redis://…: refresh tokens and rate-limit counters live in Redis
  AUTH_JWT_SECRET            HS256 signing secret, 32+ characters (10 distinct); required in production
  AUTH_JWT_ALGORITHM         access tokens: HS256 (default), EdDSA or ES256 with AUTH_JWT_PRIVATE_KEY_FILE
  TLS_CERT_FILE, TLS_KEY_FILE  serve HTTPS (and HTTP/2) with this certificate and key; reloaded on SIGHUP
  TRUST_PROXY                proxies whose X-Forwarded-For/-Proto are believed (TLS ends at the proxy)
  CORS_ORIGINS               production: the comma-separated origins allowed to call
  BASE_PATH                  a prefix for every path, such as /api (empty by default)
  WORKERS                    worker processes on one port (1; auto: one per core)
  METRICS_PORT, METRICS_HOST serve GET /metrics (Prometheus) on a port of its own (off; host 127.0.0.1)
  AUDIT_RETENTION_DAYS       days the audit trail keeps a security event (90; 0 keeps no trail)
  SMTP_URL, MAIL_FROM        smtp://… (STARTTLS) or smtps://…, user and password in the URL; unset in development,
                             mail is written as .eml files to DATA_DIR/outbox/
  WEBHOOK_URLS, WEBHOOK_SECRET  post signed events (Standard Webhooks) to these URLs; secret whsec_<base64>
  LOG_LEVEL                  fatal, error, warn, info (default), debug, trace or silent
  SITE_CONFIG_FILE           a site configuration (JSON or YAML) to validate at start and serve

See docs/configuration.md for every variable.
`

/**
 * The `tessera` command: the dispatcher. Each command's module is imported only when that command runs, so that
 * `tessera --help` or `tessera users list` does not load the HTTP server (Fastify, Swagger, JWT) nor a database
 * driver it does not use. Exit codes: 0 done, 1 failure (one line on stderr), 2 usage error; `site-config validate`
 * has its own (0 valid, 1 invalid, 2 unreadable).
 */
export async function main(argv: readonly string[]): Promise<void> {
  /** The operator commands' stdout and stderr, which they give whole lines. */
  const output = {
    stdout: (text: string) => void process.stdout.write(text),
    stderr: (text: string) => void process.stderr.write(text),
  }
  if (argv[0] === 'site-config') {
    const { runSiteConfigCommand } = await import('./site-config.js')
    process.exitCode = await runSiteConfigCommand(argv.slice(1), output)
    return
  }
  if (argv[0] === 'store') {
    const { runStoreCommand } = await import('./store.js')
    process.exitCode = await runStoreCommand(argv.slice(1), {
      stdout: output.stdout,
      stderr: process.stderr,
      environment: readEnvironment,
      clock: systemClock,
    })
    return
  }
  if (argv[0] === 'users') {
    const [{ runUsersCommand }, { processTerminal }] = await Promise.all([
      import('./users.js'),
      import('./terminal.js'),
    ])
    process.exitCode = await runUsersCommand(argv.slice(1), {
      ...output,
      terminal: processTerminal(),
      environment: readEnvironment,
      clock: systemClock,
    })
    return
  }
  if (argv[0] === 'keys') {
    const { runKeysCommand } = await import('./keys.js')
    process.exitCode = await runKeysCommand(argv.slice(1), output)
    return
  }
  if (argv[0] === 'mail') {
    const { runMailCommand } = await import('./mail.js')
    process.exitCode = await runMailCommand(argv.slice(1), { ...output, environment: readEnvironment })
    return
  }
  if (argv[0] === 'webhooks') {
    const { runWebhooksCommand } = await import('./webhooks.js')
    process.exitCode = await runWebhooksCommand(argv.slice(1), {
      ...output,
      environment: readEnvironment,
      clock: systemClock,
    })
    return
  }
  if (argv[0] === 'audit') {
    const { runAuditCommand } = await import('./audit.js')
    process.exitCode = await runAuditCommand(argv.slice(1), {
      ...output,
      environment: readEnvironment,
      clock: systemClock,
    })
    return
  }
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    process.stderr.write(`tessera: ${oneLine((error as Error).message)}\n${USAGE}`)
    process.exitCode = 2
    return
  }
  const { values, positionals } = parsed
  const [command = 'help', ...rest] = positionals
  if (values.version) {
    process.stdout.write(`${readAppInfo().version}\n`)
    return
  }
  if (values.help || command === 'help') {
    process.stdout.write(USAGE)
    return
  }
  if (rest.length > 0) {
    process.stderr.write(`tessera: unexpected argument ${quoted(rest[0] ?? '')}\n${USAGE}`)
    process.exitCode = 2
    return
  }
  const env = await readEnvironment(values.config).catch((error: Error) => {
    process.stderr.write(`tessera: ${oneLine(error.message)}\n`)
    process.exitCode = 1
    return null
  })
  if (env === null) return
  switch (command) {
    case 'serve':
      return (await import('./serve.js')).serve(env)
    case 'migrate':
      return (await import('./migrate.js')).runMigrations(env)
    default:
      process.stderr.write(`tessera: unknown command ${quoted(command)}\n${USAGE}`)
      process.exitCode = 2
  }
}

function parse(argv: readonly string[]) {
  return parseCommandLine(argv, {
    config: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  })
}
