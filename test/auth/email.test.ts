import { Ajv2020 } from 'ajv/dist/2020.js'
import { describe, expect, it } from 'vitest'
import { EMAIL_PATTERN, isValidEmail, normalizeEmail } from '../../src/auth/email.js'

const local64 = 'a'.repeat(64)
/** A domain of `length` characters: two labels of 63 and the rest. */
const domain = (length: number) => `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 128)}`

/** The service's own cases: addresses it accepts and values it refuses (R2.1.2). */
const ACCEPTED = [
  'a@b',
  'ada@example.com',
  "o'reilly+tag@sub.example.co.uk",
  'x@a-b.example',
  ' padded@example.com ',
  'a.@example.com',
  '.a@example.com',
  'a..b@example.com',
  "!#$%&'*+/=?^_`{|}~-@example.com",
  'UPPER@EXAMPLE.COM',
  '\t\n a@example.com\r\n',
  '\u00a0a@example.com\u3000',
  '\ufeffa@example.com',
  `a@${'b'.repeat(63)}.com`,
  `${local64}@${domain(254 - 65)}`,
  `  ${local64}@${domain(254 - 65)}  `,
]

const REFUSED = [
  '',
  '   ',
  'plain',
  '@example.com',
  'a@',
  'a@@example.com',
  'a b@example.com',
  'a\tb@example.com',
  'a@-example.com',
  'a@example-.com',
  'a@exa_mple.com',
  'jörg@example.com',
  'a@exämple.com',
  'a@example..com',
  'a@.example.com',
  'a@example.com.',
  `a@${'b'.repeat(64)}.com`,
  `${local64}@${domain(255 - 65)}`,
  'a@example.com\u200b',
  '"quoted"@example.com',
  'a@[127.0.0.1]',
  'a@example.com\nb@example.com',
  '\ud800@example.com',
]

describe('isValidEmail (WHATWG valid e-mail address, at most 254 characters)', () => {
  it.each(ACCEPTED)('accepts %j', (email) => {
    expect(isValidEmail(email)).toBe(true)
  })

  it.each(REFUSED)('refuses %j', (email) => {
    expect(isValidEmail(email)).toBe(false)
  })

  it('counts 254 characters as the most', () => {
    const at254 = `${local64}@${domain(254 - 65)}`
    expect(at254).toHaveLength(254)
    expect(isValidEmail(at254)).toBe(true)
    expect(isValidEmail(`${local64}@${domain(255 - 65)}`)).toBe(false)
  })
})

describe('R4.9.6 EMAIL_PATTERN, the rule as the API document states it, gives the answers of isValidEmail', () => {
  // as JSON Schema validators run a `pattern`: Ajv (with the `u` flag), and a plain ECMAScript RegExp
  const ajv = new Ajv2020({ strict: true })
  const validate = ajv.compile({ type: 'string', pattern: EMAIL_PATTERN })
  const plain = new RegExp(EMAIL_PATTERN)
  const patternAccepts = (value: string) => {
    const byAjv = validate(value)
    expect(plain.test(value), `RegExp without the u flag on ${JSON.stringify(value)}`).toBe(byAjv)
    return byAjv
  }

  it.each([...ACCEPTED, ...REFUSED])('%j', (email) => {
    expect(patternAccepts(email)).toBe(isValidEmail(email))
  })

  it('agrees on 20,000 random strings made of the characters that matter', () => {
    // a fixed seed: the same strings on every run (xorshift32)
    let state = 0x2545f491
    const random = (below: number) => {
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      return (state >>> 0) % below
    }
    const pick = (choices: readonly string[], least: number, most: number) => {
      let text = ''
      for (let n = least + random(most - least + 1); n > 0; n--) text += choices[random(choices.length)]
      return text
    }
    // an address-like shape (white space, a local part, @, labels), each part now and then broken
    const space = ['', '', '', '', ' ', '\t', '\n', '\u00a0', '\ufeff', '\u200b']
    const local = ['a', 'Z', '0', '.', '+', "'", '_', '~', 'a', 'b', 'c', ' ', 'é', '\ud800', '"']
    const label = ['a', '0', 'b', 'c', 'd', 'e', 'f', '-', '-', '_', 'é']
    const at = ['@', '@', '@', '@', '@', '@', '', '@@']
    let accepted = 0
    for (let i = 0; i < 20_000; i++) {
      const labels = Array.from({ length: 1 + random(3) }, () => pick(label, 0, 4)).join('.')
      const value = `${pick(space, 0, 2)}${pick(local, 0, 4)}${at[random(at.length)]}${labels}${pick(space, 0, 2)}`
      const expected = isValidEmail(value)
      if (expected) accepted++
      if (patternAccepts(value) !== expected)
        expect.fail(`${JSON.stringify(value)}: isValidEmail says ${expected}`)
    }
    // the strings reach both answers, so the comparison is not one-sided
    expect(accepted).toBeGreaterThan(500)
    expect(accepted).toBeLessThan(19_500)
  })

  it('agrees at the length limit, with and without white space around the address', () => {
    for (let length = 250; length <= 258; length++) {
      const address = `${local64}@${domain(length - 65)}`
      for (const value of [address, ` ${address}`, `${address}\n`, `\u3000${address}\u3000`]) {
        expect(patternAccepts(value), `${length}: ${JSON.stringify(value.slice(0, 3))}`).toBe(
          isValidEmail(value),
        )
      }
    }
  })
})

describe('normalizeEmail', () => {
  it('trims and lower-cases', () => {
    expect(normalizeEmail('  Ada@Example.COM ')).toBe('ada@example.com')
  })

  it('is null for an invalid address', () => {
    expect(normalizeEmail('nope')).toBeNull()
  })
})
