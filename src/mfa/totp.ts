import { Secret, TOTP } from 'otpauth'

/**
 * Authenticator-app codes (RFC 6238 TOTP) with the parameters every common app assumes: HMAC-SHA-1, six digits, a
 * 30-second step, and a 160-bit secret (RFC 4226 §4's recommendation) shown as base32. Computed by `otpauth`.
 */
const PERIOD_SECONDS = 30
const DIGITS = 6
const ALGORITHM = 'SHA1'
const SECRET_BYTES = 20
/** Steps of clock drift accepted either way (RFC 6238 §5.2's "one time step"): a code of two steps off is refused. */
export const DRIFT_STEPS = 1

/** A TOTP code as a request gives it: six digits. */
export const TOTP_CODE = /^[0-9]{6}$/

/** A new secret, base32 (32 characters). */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32
}

/** The `otpauth://totp/` URI an app reads from the QR code: `issuer` and the account's `label` (its address). */
export function totpUri(secret: string, issuer: string, label: string): string {
  return generator(secret, issuer, label).toString()
}

/**
 * The time step (RFC 6238's T) whose code `code` is, within DRIFT_STEPS of the step of `now` (epoch ms); null when
 * it is none of them. Compared in constant time by the library.
 */
export function matchingStep(secret: string, code: string, now: number): number | null {
  if (!TOTP_CODE.test(code)) return null
  const delta = generator(secret, '', '').validate({ token: code, timestamp: now, window: DRIFT_STEPS })
  return delta === null ? null : stepAt(now) + delta
}

/** The time step of `now` (epoch ms). */
export function stepAt(now: number): number {
  return Math.floor(now / 1000 / PERIOD_SECONDS)
}

/** The URI as a QR code: an SVG image as a data URL, which an `<img>` shows without a request. */
export async function qrCodeDataUrl(uri: string): Promise<string> {
  // loaded with the first enrolment, not at start; a CommonJS package, so its default export, the one a bundle's chunk
  // of it has too (bundle/: esbuild gives a dynamically imported CommonJS module no named exports)
  const { default: qrcode } = await import('qrcode')
  const svg = await qrcode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  return `data:image/svg+xml;base64,${Buffer.from(svg, 'utf8').toString('base64')}`
}

function generator(secret: string, issuer: string, label: string): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: ALGORITHM,
    digits: DIGITS,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  })
}
