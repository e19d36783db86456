import { describe, expect, it } from 'vitest'
import { createReuseMemory } from '../../src/auth/reuse-memory.js'

describe('createReuseMemory', () => {
  it('reports the first reuse of each digest once, and forgets the oldest past its limit', () => {
    const memory = createReuseMemory(2)
    expect(memory.isFirstReuse('a')).toBe(true)
    expect(memory.isFirstReuse('a')).toBe(false)
    expect(memory.isFirstReuse('b')).toBe(true)
    expect(memory.isFirstReuse('c')).toBe(true)
    // 'a' was the oldest of three: forgotten, so its next return counts as a first reuse again
    expect(memory.isFirstReuse('a')).toBe(true)
    expect(memory.isFirstReuse('c')).toBe(false)
  })
})
