import { ConfigError } from './config-error.js'
import type { EnvReader } from './env-reader.js'
import type { Environment } from './environment.js'
import { isLoopbackHost } from './server-config.js'

/** AUTH_REGISTER_CODE: whether registration needs a code sent to the address (docs/api.md §4.3). */
export const REGISTER_CODE_MODES = ['optional', 'required'] as const
export type RegisterCodeMode = (typeof REGISTER_CODE_MODES)[number]

/** How mail leaves the service (docs/api.md §6.4 "Mail"). */
export interface MailConfig {
  /**
   * SMTP_URL: `smtp://` (STARTTLS) or `smtps://` (TLS from the start), user and password in the URL. Null: in
   * development each message is written as an `.eml` file to `<DATA_DIR>/outbox/`; in production no mail can be
   * sent and the code endpoints answer 503.
   */
  smtpUrl: string | null
  /** MAIL_FROM: the From header, an address or `Name <address>`. */
  from: string
  /** MAIL_PRODUCT_NAME: the name the messages sign with. */
  productName: string
  /** MAIL_TEMPLATES_DIR: the operator's texts, which replace the built-in ones of the same name; null for none. */
  templatesDir: string | null
  /** MAIL_RETRY_SECONDS: the wait after a first failed delivery; it doubles with each further one, up to an hour. */
  retrySeconds: number
  /** MAIL_SEND_TIMEOUT_SECONDS: the longest a connection to the mail server may be silent (connect, greeting, each reply). */
  sendTimeoutSeconds: number
  /** MAIL_SEND_CONNECTIONS: how many messages each process sends at once, each on a connection of its own. */
  sendConnections: number
  /** Whether mail can be sent at all: SMTP_URL is set, or development writes `.eml` files. */
  available: boolean
  /**
   * PASSWORD_RESET_URL: the address of the application's reset page, with `{key}` where the reset key goes (and
   * `{email}`, if given, where the address goes); a reset mail then carries it as a link (resetLink). Null: no link,
   * the mail shows the code and the reset key only (docs/api.md R4.17.3).
   */
  passwordResetUrl: string | null
}

/** The one-time e-mail codes (docs/api.md §4.14). */
export interface CodeConfig {
  /** EMAIL_CODE_TTL_SECONDS: how long a code is good. */
  ttlSeconds: number
  /** EMAIL_CODE_RESEND_SECONDS: the least time between two sends to one address for one purpose. */
  resendSeconds: number
  /**
   * EMAIL_CODE_HOURLY_LIMIT: sends to one address for one purpose in an hour, counted in quarters of an hour: a
   * quarter of it, rounded up, in each (docs/api.md R8.9).
   */
  hourlyLimit: number
  /** AUTH_REGISTER_CODE. */
  register: RegisterCodeMode
}

export function readMailConfig(read: EnvReader, env: Environment): MailConfig {
  const smtpUrl = read.url('SMTP_URL', ['smtp:', 'smtps:'])
  const productName = read.string('MAIL_PRODUCT_NAME', 'Tessera')
  const from = read.string('MAIL_FROM', 'no-reply@localhost')
  if (/[\r\n]/.test(from)) throw new ConfigError('MAIL_FROM', 'must be one line')
  if (/[\r\n]/.test(productName)) throw new ConfigError('MAIL_PRODUCT_NAME', 'must be one line')
  return {
    smtpUrl,
    from,
    productName,
    templatesDir: read.optional('MAIL_TEMPLATES_DIR'),
    retrySeconds: read.integer('MAIL_RETRY_SECONDS', 30, { min: 1, max: 3600 }),
    sendTimeoutSeconds: read.integer('MAIL_SEND_TIMEOUT_SECONDS', 30, { min: 1, max: 600 }),
    // nodemailer's own default for a pool: a backlog leaves up to five times as fast as one after another, and a server
    // that stalls one send holds up one connection, not the outbox
    sendConnections: read.integer('MAIL_SEND_CONNECTIONS', 5, { min: 1, max: 50 }),
    available: smtpUrl !== null || env !== 'production',
    passwordResetUrl: readPasswordResetUrl(read, env),
  }
}

/** The placeholders of PASSWORD_RESET_URL. */
const RESET_URL_PLACEHOLDER = /\{([^{}]*)\}/g

/**
 * The link a reset mail carries: PASSWORD_RESET_URL with the reset key (as the mail shows it: Crockford's base32 and
 * hyphens, nothing to escape) in place of `{key}` and the address, percent-encoded, in place of `{email}`.
 */
export function resetLink(template: string, resetKey: string, email: string): string {
  return template.replace(RESET_URL_PLACEHOLDER, (_, name: string) =>
    name === 'key' ? resetKey : encodeURIComponent(email),
  )
}

/**
 * PASSWORD_RESET_URL, checked at start as resetLink will use it: `{key}` in it, no placeholder but `{key}` and
 * `{email}`, an absolute URL once they are filled in, over https (a link in a mail carries a secret: over http anyone
 * on the path reads it), or over http to a loopback address in development. Its value is never quoted back: it is a
 * URL, which may carry credentials.
 */
function readPasswordResetUrl(read: EnvReader, env: Environment): string | null {
  const template = read.optional('PASSWORD_RESET_URL')
  if (template === null) return null
  const names = [...template.matchAll(RESET_URL_PLACEHOLDER)].map((match) => match[1] as string)
  if (names.some((name) => name !== 'key' && name !== 'email'))
    throw new ConfigError('PASSWORD_RESET_URL', 'may hold no placeholder but {key} and {email}')
  if (!names.includes('key'))
    throw new ConfigError('PASSWORD_RESET_URL', 'must contain {key}, where the link gives the reset key')
  const filled = resetLink(template, 'ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-2345', 'owner@example.com')
  if (!URL.canParse(filled) || !['https:', 'http:'].includes(new URL(filled).protocol))
    throw new ConfigError('PASSWORD_RESET_URL', 'must be an https URL with {key} in it')
  const url = new URL(filled)
  if (url.protocol === 'http:' && (env === 'production' || !isLoopbackHost(url.hostname)))
    throw new ConfigError(
      'PASSWORD_RESET_URL',
      'must be an https URL (http only to a loopback address in development): the link carries the reset key',
    )
  return template
}

export function readCodeConfig(read: EnvReader, mail: MailConfig): CodeConfig {
  const register = read.oneOf('AUTH_REGISTER_CODE', REGISTER_CODE_MODES, 'optional')
  // no account could ever be made: refused at start rather than answering 503 to every registration
  if (register === 'required' && !mail.available)
    throw new ConfigError('AUTH_REGISTER_CODE', 'is required, but no mail can be sent: set SMTP_URL')
  return {
    ttlSeconds: read.integer('EMAIL_CODE_TTL_SECONDS', 600, { min: 60, max: 86_400 }),
    resendSeconds: read.integer('EMAIL_CODE_RESEND_SECONDS', 60, { min: 0, max: 3600 }),
    hourlyLimit: read.integer('EMAIL_CODE_HOURLY_LIMIT', 10, { min: 1, max: 10_000 }),
    register,
  }
}
