import type { OutgoingMail } from './outgoing-mail.js'

/** What became of one send. */
export type DeliveryResult =
  | {
      delivered: true
      /** The mail server's answer (`250 OK …`), or what the development outbox did. */
      response: string
      /** The .eml file written, in development without SMTP_URL; null otherwise. */
      file: string | null
    }
  | {
      delivered: false
      /**
       * The server refused this message for good (a 5xx answer to its recipient or its content): sending it again
       * would be refused again. False for everything that may pass later: a server that is down, slow or busy, a
       * refused login or sender (the operator's to fix), a file that could not be written.
       */
      permanent: boolean
      /** One line for the log: the server's answer or the error, never the message. */
      reason: string
    }

/** How a message leaves the service: by SMTP, or into the development outbox. */
export interface MailTransport {
  /** For the log: `smtp://host:port` (no credentials), or the development outbox's folder. */
  readonly description: string
  /**
   * Sends one message. Never rejects: a failure is a result. A send in progress when `signal` aborts is abandoned
   * (its connection closed) and fails, unless the server had accepted the message already.
   */
  send(mail: OutgoingMail, signal?: AbortSignal): Promise<DeliveryResult>
  /** Closes the connections; a send still in progress fails. */
  close(): Promise<void>
}
