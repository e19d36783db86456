import { randomBytes } from 'node:crypto'
import type { MailConfig } from '../config/mail-config.js'
import { loadMailTemplates } from './mail-templates.js'
import type { DeliveryResult } from './mail-transport.js'
import { openMailTransport } from './open-mail-transport.js'
import { messageIdFor } from './outgoing-mail.js'

/** What became of the test message, and by which transport; null when no mail can be sent (production, no SMTP_URL). */
export type TestMailResult = (DeliveryResult & { transport: string }) | null

/**
 * `tessera mail test <address>`: the `test` message, written with the templates the service would use, sent at once
 * through the transport it would use (SMTP_URL, or the development outbox's .eml files), not through the outbox: the
 * operator sees the server's answer, or its refusal, now. Throws a ConfigError when MAIL_TEMPLATES_DIR cannot be used.
 */
export async function sendTestMail(
  config: { mail: MailConfig; storage: { dataDir: string } },
  to: string,
): Promise<TestMailResult> {
  const templates = await loadMailTemplates(config.mail)
  const transport = await openMailTransport(config.mail, config.storage.dataDir)
  if (transport === null) return null
  try {
    const rendered = templates.render('test', { email: to })
    const messageId = messageIdFor(randomBytes(16).toString('hex'), config.mail.from)
    const result = await transport.send({ ...rendered, messageId, from: config.mail.from, to })
    return { ...result, transport: transport.description }
  } finally {
    await transport.close()
  }
}
