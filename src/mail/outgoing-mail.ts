import type { SendMailOptions } from 'nodemailer'
import type { RenderedMail } from './mail-templates.js'

/** A message as a transport sends it. */
export interface OutgoingMail extends RenderedMail {
  /** The Message-ID header, angle brackets included. */
  messageId: string
  /** MAIL_FROM. */
  from: string
  to: string
}

/**
 * The Message-ID of the outbox message `id`: the same on every attempt, so that a message delivered twice (the
 * process died between the server's acceptance and the outbox's update) can be recognized as one by the receiver.
 * Its domain is MAIL_FROM's, as RFC 5322 section 3.6.4 suggests, so that it is unique beyond this service.
 */
export function messageIdFor(id: string, from: string): string {
  const domain = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from)?.[1] ?? 'tessera.invalid'
  return `<${id}@${domain}>`
}

/** The message as nodemailer composes it (the SMTP transport and the .eml files alike). */
export function nodemailerMessage(mail: OutgoingMail): SendMailOptions {
  return {
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: mail.messageId,
    // RFC 3834: an automatic message, to which vacation responders and the like do not answer
    headers: { 'Auto-Submitted': 'auto-generated' },
    // nodemailer reads no file and fetches no URL for a message: its fields are ours, but say so
    disableFileAccess: true,
    disableUrlAccess: true,
  }
}
