import { describe, expect, it } from 'vitest'
import { isValidEmail, normalizeEmail } from '../../src/auth/email.js'

describe('isValidEmail (WHATWG valid e-mail address, at most 254 characters)', () => {
  it.each([
    'a@b',
    'ada@example.com',
    "o'reilly+tag@sub.example.co.uk",
    'x@a-b.example',
    ' padded@example.com ',
  ])('accepts %j', (email) => {
    expect(isValidEmail(email)).toBe(true)
  })

  it.each([
    '',
    'plain',
    '@example.com',
    'a@',
    'a@@example.com',
    'a b@example.com',
    'a@-example.com',
    'a@example-.com',
    'a@exa_mple.com',
    'jörg@example.com',
    'a@example..com',
    `a@${'b'.repeat(64)}.com`,
  ])('refuses %j', (email) => {
    expect(isValidEmail(email)).toBe(false)
  })

  it('counts 254 characters as the most', () => {
    const local = 'a'.repeat(64)
    const domain = (length: number) => `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 128)}`
    const at254 = `${local}@${domain(254 - 65)}`
    expect(at254).toHaveLength(254)
    expect(isValidEmail(at254)).toBe(true)
    expect(isValidEmail(`${local}@${domain(255 - 65)}`)).toBe(false)
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
