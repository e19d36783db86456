import { join } from 'node:path'
import type { MailConfig } from '../config/mail-config.js'
import { createEmlFileTransport } from './eml-file-transport.js'
import type { MailTransport } from './mail-transport.js'

/** The folder of the development outbox, below DATA_DIR. */
export const DEVELOPMENT_OUTBOX = 'outbox'

/**
 * The transport the configuration asks for: SMTP with SMTP_URL (nodemailer is loaded now); without it, in
 * development and test, the .eml files of `<DATA_DIR>/outbox/` (nodemailer is loaded by the first message); null in
 * production without SMTP_URL, where no mail can be sent.
 */
export async function openMailTransport(
  mail: Pick<MailConfig, 'smtpUrl' | 'sendTimeoutSeconds' | 'sendConnections' | 'available'>,
  dataDir: string,
): Promise<MailTransport | null> {
  if (mail.smtpUrl !== null) {
    // the module that loads nodemailer at once: only when mail goes by SMTP
    const { createSmtpTransport } = await import('./smtp-transport.js')
    return createSmtpTransport({
      url: mail.smtpUrl,
      timeoutSeconds: mail.sendTimeoutSeconds,
      connections: mail.sendConnections,
    })
  }
  if (!mail.available) return null
  return createEmlFileTransport({ dir: join(dataDir, DEVELOPMENT_OUTBOX) })
}
