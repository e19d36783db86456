import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'
import type { ReceivedMail as SmtpMessage } from './smtp-server.js'

/** A mail as a test reads it. */
export interface ReceivedMail {
  to: string
  subject: string
  text: string
  html: string
  messageId: string
}

/** Where a test service's mail arrives: the development outbox's `.eml` files, or a real SMTP server. */
export interface Mailbox {
  /** Every mail received so far, in order of arrival. */
  readonly mails: readonly ReceivedMail[]
  /** The next mail to `to` not yet taken by `next`; rejects after `timeoutMs`. */
  next(to: string, timeoutMs?: number): Promise<ReceivedMail>
  close(): Promise<void>
}

/** The six-digit code a mail carries, or null. */
export function codeIn(mail: ReceivedMail): string | null {
  return /\b(\d{6})\b/.exec(mail.text)?.[1] ?? null
}

/** The reset key a reset mail carries (docs/api.md R4.17), as it shows it, or null. */
export function resetKeyIn(mail: ReceivedMail): string | null {
  return /\b([0-9A-Z]{4}(?:-[0-9A-Z]{4}){6})\b/.exec(mail.text)?.[1] ?? null
}

/**
 * A mailbox over mails collected by `poll` (called every 20 ms): what both kinds share, so that a test reads its
 * mail the same way whichever way the service sends it.
 */
export function pollingMailbox(poll: () => Promise<ReceivedMail[]>, stop: () => Promise<void>): Mailbox {
  const mails: ReceivedMail[] = []
  const taken = new Set<ReceivedMail>()
  let closed = false
  let polling = Promise.resolve()
  const timer = setInterval(() => {
    polling = polling.then(async () => {
      if (!closed) mails.push(...(await poll()))
    })
  }, 20)
  return {
    mails,
    async next(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const mail = mails.find((candidate) => candidate.to === to && !taken.has(candidate))
        if (mail) {
          taken.add(mail)
          return mail
        }
        if (Date.now() > deadline) throw new Error(`no mail to ${to} within ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    async close() {
      closed = true
      clearInterval(timer)
      await polling
      await stop()
    },
  }
}

/** The development outbox of a service without SMTP_URL: `<dataDir>/outbox/*.eml`, read as files appear. */
export function emlMailbox(dataDir: string): Mailbox {
  const seen = new Set<string>()
  const dir = join(dataDir, 'outbox')
  return pollingMailbox(
    async () => {
      const names = await readdir(dir).catch(() => [] as string[])
      const fresh = names.filter((name) => name.endsWith('.eml') && !seen.has(name)).sort()
      const parsed: ReceivedMail[] = []
      for (const name of fresh) {
        seen.add(name)
        parsed.push(await parseMail(await readFile(join(dir, name))))
      }
      return parsed
    },
    async () => {},
  )
}

/** A raw RFC 5322 message as a test reads it. */
export async function parseMail(raw: Buffer | string): Promise<ReceivedMail> {
  const mail = await simpleParser(raw)
  const to = Array.isArray(mail.to) ? mail.to[0] : mail.to
  return {
    to: to?.value[0]?.address?.toLowerCase() ?? '',
    subject: mail.subject ?? '',
    text: mail.text ?? '',
    html: typeof mail.html === 'string' ? mail.html : '',
    messageId: mail.messageId ?? '',
  }
}

/** The messages a test SMTP server (test/support/smtp-server.ts) receives, one per envelope recipient. */
export function smtpMailbox(server: { readonly messages: readonly SmtpMessage[] }): Mailbox {
  let read = 0
  return pollingMailbox(
    async () => {
      const fresh = server.messages.slice(read)
      read += fresh.length
      return fresh.flatMap((message) =>
        message.to.map((to) => ({
          to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          messageId: message.messageId,
        })),
      )
    },
    async () => {},
  )
}
