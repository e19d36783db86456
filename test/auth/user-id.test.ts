import { describe, expect, it } from 'vitest'
import { generateUserId, isUserId } from '../../src/auth/user-id.js'

describe('generateUserId', () => {
  it('draws 10 decimal digits with a first digit other than 0', () => {
    for (let i = 0; i < 1000; i++) expect(generateUserId()).toMatch(/^[1-9]\d{9}$/)
  })

  it('draws at random: 1000 ids are distinct and spread over the range', () => {
    const ids = Array.from({ length: 1000 }, () => Number(generateUserId()))
    expect(new Set(ids).size).toBe(1000)
    expect(Math.min(...ids)).toBeLessThan(3_000_000_000)
    expect(Math.max(...ids)).toBeGreaterThan(7_000_000_000)
  })
})

describe('isUserId', () => {
  it.each([
    ['1234567890', true],
    ['0123456789', false],
    ['123456789', false],
    ['12345678901', false],
    [1234567890, false],
  ])('%j → %s', (value, expected) => {
    expect(isUserId(value)).toBe(expected)
  })
})
