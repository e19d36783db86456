import { randomInt } from 'node:crypto'

/** A user id: 10 decimal digits, the first not 0, from a CSPRNG so ids reveal neither order nor count. */
export function generateUserId(): string {
  return String(randomInt(1_000_000_000, 10_000_000_000))
}

export function isUserId(value: unknown): value is string {
  return typeof value === 'string' && /^[1-9]\d{9}$/.test(value)
}
