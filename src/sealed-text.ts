import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/**
 * Text sealed with AES-256-GCM (encrypted and authenticated): `v1.` and base64url of a random 96-bit IV, the
 * ciphertext and the 128-bit tag. `context` is bound in as additional data: a value sealed for one row, ticket or
 * name does not open for another. What the one-time tickets and second-factor secrets are kept in.
 */
const PREFIX = 'v1.'
const IV_BYTES = 12
const TAG_BYTES = 16

/** `text` sealed under the 256-bit `key` for `context`. */
export function sealText(key: Buffer, context: string, text: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()])
  return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')
}

/** The text `sealed` holds; null when it does not authenticate under `key` for `context`, or is no sealed text. */
export function openText(key: Buffer, context: string, sealed: string): string | null {
  if (!sealed.startsWith(PREFIX)) return null
  const bytes = Buffer.from(sealed.slice(PREFIX.length), 'base64url')
  if (bytes.length < IV_BYTES + TAG_BYTES) return null
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), {
    authTagLength: TAG_BYTES,
  })
  decipher.setAAD(Buffer.from(context, 'utf8'))
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
  try {
    return Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8')
  } catch {
    return null
  }
}
