import { randomBytes } from 'node:crypto'
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describeFileError } from '../errors.js'
import type { DeliveryResult, MailTransport } from './mail-transport.js'
import { nodemailerMessage, type OutgoingMail } from './outgoing-mail.js'

/**
 * Development without SMTP_URL: each message is composed as a real MIME message (nodemailer's, the same as SMTP
 * would carry) and written to `dir` as `<outbox id>.eml`, which any mail client opens. The file appears whole (written
 * aside, then renamed), so whoever watches the folder never reads half a message; a message written again (its
 * removal from the outbox failed) replaces its file. The folder and the files are the owner's only: they hold codes.
 * nodemailer is loaded by the first message.
 */
export function createEmlFileTransport(options: { dir: string }): MailTransport {
  let composer: Promise<(mail: OutgoingMail) => Promise<Buffer>> | null = null
  return {
    description: `${options.dir} (development outbox: .eml files)`,
    async send(mail): Promise<DeliveryResult> {
      const file = join(options.dir, `${fileStem(mail.messageId)}.eml`)
      const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
      try {
        composer ??= loadComposer()
        const message = await (await composer)(mail)
        // each time: a developer may empty the folder, or remove it, while the service runs
        await mkdir(options.dir, { recursive: true, mode: 0o700 })
        await writeFile(draft, message, { mode: 0o600 })
        await rename(draft, file)
        return { delivered: true, response: `written to ${file}`, file }
      } catch (error) {
        await unlink(draft).catch(() => {})
        const reason = `cannot write ${file}: ${describeFileError(error)}`
        return { delivered: false, permanent: false, reason }
      }
    },
    async close() {},
  }
}

/** nodemailer's stream transport, which composes the message and hands it back instead of sending it. */
async function loadComposer(): Promise<(mail: OutgoingMail) => Promise<Buffer>> {
  const { default: nodemailer } = await import('nodemailer')
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' })
  return async (mail) => (await transporter.sendMail(nodemailerMessage(mail))).message as Buffer
}

/** The file's name: the Message-ID's local part (the outbox id), which is the same on every attempt. */
function fileStem(messageId: string): string {
  return messageId.replace(/^<([^@>]*).*$/, '$1').replace(/[^\w.-]/g, '_')
}
