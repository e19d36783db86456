import { hkdfSync } from 'node:crypto'
import { CODE_PURPOSES } from '../code-purpose.js'
import { openText, sealText } from '../sealed-text.js'
import { type MailIntent, NOTICE_NAMES } from './mail-intent.js'

/** What an outbox row carries, sealed: whom the message goes to, what it is to say, and in which language. */
export interface SealedMail {
  to: string
  intent: MailIntent
  /**
   * The tag of the language it is written in (docs/api.md R1.18); absent in a row queued before languages were
   * kept, or off HTTP: the default language. One the service no longer speaks is written in the default as well.
   */
  language?: string
}

/**
 * Seals and opens the payload of an outbox row (OutboxMessage.payload). A queued code mail holds the code in the
 * clear until it is delivered, so the row holds it only encrypted, and authenticated so that whoever can write to
 * the table cannot make the service mail a text of their choosing.
 */
export interface OutboxSeal {
  /** The payload of the row `id`: ASCII, at most MAX_PAYLOAD_LENGTH characters. */
  seal(id: string, mail: SealedMail): string
  /** The mail of the row `id`; null when no key opens it, it was sealed for another row, or it is not a payload. */
  open(id: string, payload: string): SealedMail | null
}

/** OutboxMessage.payload's bound (src/storage/stores.ts). */
export const MAX_PAYLOAD_LENGTH = 8192

const KEY_INFO = 'tessera outbox v1'

/**
 * AES-256-GCM under a key derived from AUTH_JWT_SECRET (HKDF-SHA-256, an info of its own, so this key is used for
 * nothing else), the row's id as additional data: a payload copied into another row does not open. Opening tries
 * the keys of AUTH_JWT_PREVIOUS_SECRETS too: mail queued before the secret was rotated is still delivered.
 */
export function createOutboxSeal(secrets: {
  secret: string
  previousSecrets: readonly string[]
}): OutboxSeal {
  const [current, ...previous] = [secrets.secret, ...secrets.previousSecrets].map(deriveKey)
  const keys = [current as Buffer, ...previous]
  return {
    seal(id, mail) {
      const payload = sealText(current as Buffer, id, JSON.stringify(mail))
      if (payload.length > MAX_PAYLOAD_LENGTH)
        throw new RangeError(
          `a sealed mail of ${payload.length} characters exceeds the outbox's ${MAX_PAYLOAD_LENGTH}`,
        )
      return payload
    },
    open(id, payload) {
      for (const key of keys) {
        const text = openText(key, id, payload)
        if (text !== null) return parseSealedMail(text)
      }
      return null
    },
  }
}

function deriveKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, '', KEY_INFO, 32))
}

/**
 * The sealed JSON, checked for its shape although it authenticated: a payload sealed by another version of the
 * service may hold what this one does not know, and such a row is given up, not delivered half understood.
 */
function parseSealedMail(text: string): SealedMail | null {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  const mail = value as Partial<SealedMail> | null
  if (typeof mail?.to !== 'string' || !isIntent(mail.intent)) return null
  if (mail.language === undefined) return { to: mail.to, intent: mail.intent }
  if (typeof mail.language !== 'string') return null
  return { to: mail.to, intent: mail.intent, language: mail.language }
}

function isIntent(value: unknown): value is MailIntent {
  const intent = value as Record<string, unknown> | null
  switch (intent?.kind) {
    case 'code':
      return (
        (CODE_PURPOSES as readonly unknown[]).includes(intent.purpose) &&
        typeof intent.code === 'string' &&
        typeof intent.expiresAt === 'number' &&
        (intent.resetKey === undefined || typeof intent.resetKey === 'string')
      )
    case 'notice':
      return (
        (NOTICE_NAMES as readonly unknown[]).includes(intent.notice) &&
        typeof intent.values === 'object' &&
        intent.values !== null &&
        Object.values(intent.values).every((entry) => typeof entry === 'string')
      )
    case 'test':
      return true
    default:
      return false
  }
}
