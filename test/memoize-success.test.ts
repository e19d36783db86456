import { describe, expect, it } from 'vitest'
import { memoizeSuccess } from '../src/memoize-success.js'

describe('memoizeSuccess', () => {
  it('makes the value once, at the first call, for every call after it, concurrent ones included', async () => {
    let made = 0
    const value = memoizeSuccess(async () => ++made)
    expect(made).toBe(0)
    expect(await Promise.all([value(), value(), value()])).toEqual([1, 1, 1])
    expect(await value()).toBe(1)
    expect(made).toBe(1)
  })

  it('keeps no failure: the call after a rejection makes it again, and a success is then kept', async () => {
    let attempts = 0
    const value = memoizeSuccess(async () => {
      attempts++
      if (attempts === 1) throw new Error('down')
      return attempts
    })
    await expect(Promise.all([value(), value()])).rejects.toThrow('down')
    expect(attempts).toBe(1)
    expect(await value()).toBe(2)
    expect(await value()).toBe(2)
    expect(attempts).toBe(2)
  })
})
