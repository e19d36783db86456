import { describe, expect, it } from 'vitest'
import { newResetKey, RESET_KEY_LENGTH, readResetKey } from '../../src/auth/reset-key.js'
import { RESET_CODE_PATTERN } from '../../src/http/schemas.js'

/** Crockford's base32. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
/** What the request schema of POST /auth/password/reset lets through, as Ajv reads a pattern. */
const schemaTakes = (text: string) => new RegExp(RESET_CODE_PATTERN, 'u').test(text)

describe('reset keys (docs/api.md R4.14.2, R4.17)', () => {
  it('are 28 characters of Crockford base32 in seven groups of four, read back as they are shown', () => {
    const key = newResetKey()
    expect(key).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(?:-[0-9A-HJKMNP-TV-Z]{4}){6}$/)
    expect(RESET_KEY_LENGTH).toBe(28)
    expect(readResetKey(key)).toBe(key.replaceAll('-', ''))
    expect(schemaTakes(key)).toBe(true)
  })

  it('are drawn at random: 2,000 of them all differ, and every character takes every value', () => {
    const keys = Array.from({ length: 2_000 }, () => readResetKey(newResetKey()) as string)
    expect(new Set(keys).size).toBe(keys.length)
    // 140 bits, five to a character: each position takes all 32 values over 2,000 keys (a position stuck at fewer,
    // such as the first with only 3 bits of 128, would show here)
    for (let position = 0; position < RESET_KEY_LENGTH; position++) {
      const seen = new Set(keys.map((key) => key[position]))
      expect(seen.size, `position ${position}`).toBe(ALPHABET.length)
    }
  })

  it('are read in either case, with hyphens and white space anywhere, I and L as 1, O as 0', () => {
    const key = 'ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-2345'
    const canonical = 'ABCDEFGHJKMNPQRSTVWXYZ012345'
    for (const written of [
      key,
      key.toLowerCase(),
      canonical,
      ` ${key.replaceAll('-', ' ')} `,
      `${key.slice(0, 9)}\u00a0${key.slice(10)}`,
      'ABCD EFGH JKMN PQRS TVWX YZ0I 2345',
      'ABCD-EFGH-JKMN-PQRS-TVWX-YZOL-2345',
    ]) {
      expect(readResetKey(written), written).toBe(canonical)
      expect(schemaTakes(written), written).toBe(true)
    }
  })

  it('refuse what is no key: a U, another length, other characters, a code', () => {
    for (const text of [
      'ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-234U',
      'ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-234',
      'ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-23456',
      'ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-234_',
      'ABCD_EFGH_JKMN_PQRS_TVWX_YZ01_2345',
      '123456',
      '',
    ]) {
      expect(readResetKey(text), text).toBeNull()
      if (text !== '123456') expect(schemaTakes(text), text).toBe(false)
    }
    // six digits are a code, which the schema takes as one
    expect(schemaTakes('123456')).toBe(true)
    expect(schemaTakes('12345')).toBe(false)
  })
})
