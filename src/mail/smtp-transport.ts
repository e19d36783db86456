import nodemailer, { type NodemailerError, type SMTPPoolOptions } from 'nodemailer'
import { isLoopbackHost } from '../config/server-config.js'
import { oneLine } from '../printable.js'
import type { DeliveryResult, MailTransport } from './mail-transport.js'
import { nodemailerMessage } from './outgoing-mail.js'

export interface SmtpTransportOptions {
  /** SMTP_URL: `smtp://[user:password@]host[:port]` (STARTTLS, port 587) or `smtps://…` (TLS, port 465). */
  url: string
  /** MAIL_SEND_TIMEOUT_SECONDS: the longest the server may stay silent (connecting, its greeting, each reply). */
  timeoutSeconds: number
  /** MAIL_SEND_CONNECTIONS: the connections of the pool, each carrying one message at a time (1 by default). */
  connections?: number
  /**
   * Certificates trusted besides the system's, for the server's: what a test gives for its self-signed one. The
   * service gives none (and NODE_EXTRA_CA_CERTS is the operator's way to add a private CA).
   */
  ca?: string | Buffer
}

/**
 * A send talks to the server several times (connect, greeting, EHLO, STARTTLS, AUTH, MAIL, RCPT, DATA, the end of
 * the data), each wait bounded by the timeout; a server that drips its replies could make it last far longer. So one
 * send is given this many timeouts in all, then aborted (its connection closed), and a mail not delivered by then is
 * tried again later.
 */
const TIMEOUTS_PER_SEND = 3

/** How long an unused connection of the pool stays open: the next mail of a burst reuses it, an idle one is closed. */
const IDLE_CONNECTION_MS = 30_000

/**
 * SMTP through a pool of nodemailer connections: each carries one message at a time, and the outbox sender sends no
 * more at once than the pool has connections. A connection is opened when a send finds none free, and reused.
 */
export function createSmtpTransport(options: SmtpTransportOptions): MailTransport {
  const timeoutMs = options.timeoutSeconds * 1000
  const maxSendMs = TIMEOUTS_PER_SEND * timeoutMs
  const transporter = nodemailer.createTransport({
    ...smtpConnection(options.url),
    pool: true,
    maxConnections: options.connections ?? 1,
    // a message whose connection dropped fails here and goes back to the outbox, which owns the retries
    maxRequeues: 0,
    idleTimeout: IDLE_CONNECTION_MS,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    ...(options.ca === undefined ? {} : { tls: { ca: options.ca } }),
    logger: false,
  } satisfies SMTPPoolOptions & { pool: true })
  return {
    description: describeSmtpUrl(options.url),
    async send(mail, signal): Promise<DeliveryResult> {
      const abandon = new AbortController()
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        abandon.abort()
      }, maxSendMs).unref()
      const abandoned = () => abandon.abort()
      if (signal?.aborted) abandoned()
      signal?.addEventListener('abort', abandoned, { once: true })
      try {
        const info = await transporter.sendMail({ ...nodemailerMessage(mail), signal: abandon.signal })
        return { delivered: true, response: oneLine(info.response), file: null }
      } catch (error) {
        return smtpFailure(error as NodemailerError, maxSendMs, timedOut)
      } finally {
        clearTimeout(timer)
        signal?.removeEventListener('abort', abandoned)
      }
    },
    async close() {
      transporter.close({ force: true })
    },
  }
}

/** SMTP_URL as nodemailer's connection options. */
export function smtpConnection(
  url: string,
): Pick<SMTPPoolOptions, 'host' | 'port' | 'secure' | 'requireTLS' | 'auth'> {
  const parsed = new URL(url)
  const secure = parsed.protocol === 'smtps:'
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1')
  return {
    host,
    port: parsed.port === '' ? (secure ? 465 : 587) : Number(parsed.port),
    secure,
    // smtp:// means STARTTLS, and a server that does not offer it is refused rather than sent the password and the
    // codes in the clear; only on the machine itself (a local relay, a test server) is it used when offered
    requireTLS: !secure && !isLoopbackHost(host),
    ...(parsed.username === ''
      ? {}
      : { auth: { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) } }),
  }
}

/** SMTP_URL without its credentials, for the log. */
export function describeSmtpUrl(url: string): string {
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}`
}

/**
 * What a failed send means. Permanent only when the server refused this recipient or this message with a 5xx
 * answer (RFC 5321 section 4.2.1; 503 is a command out of sequence, not a refusal): the same message would be refused
 * again. A refused sender (MAIL FROM) or login is the operator's to fix, and every queued message would be refused
 * alike: those are kept and tried again, like a server that cannot be reached.
 */
function smtpFailure(error: NodemailerError, maxSendMs: number, timedOut: boolean): DeliveryResult {
  const code = error.responseCode
  const refusedHere = error.command === 'RCPT TO' || error.command === 'DATA'
  const permanent = refusedHere && code !== undefined && code >= 500 && code < 600 && code !== 503
  const reason =
    error.code === 'EABORT'
      ? timedOut
        ? `no answer within ${maxSendMs / 1000} s: the send was abandoned`
        : 'the send was abandoned'
      : [error.code, error.command, error.response ?? error.message].filter(Boolean).join(' ')
  return { delivered: false, permanent, reason: oneLine(reason.replace(/\s+/g, ' ').trim()) }
}
