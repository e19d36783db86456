import { describe, expect, it } from 'vitest'
import { createVerifiedTokenMemory } from '../../src/auth/verified-token-memory.js'

const claims = (exp: number) => ({ sub: '4821039576', exp })

describe('createVerifiedTokenMemory', () => {
  it('recalls what it was told until exp, and nothing from exp * 1000 on', () => {
    const memory = createVerifiedTokenMemory<{ sub: string; exp: number }>({ limit: 10, maxTokenLength: 100 })
    memory.remember('a.b.c', claims(1_000))
    expect(memory.recall('a.b.c', 999_999)).toEqual(claims(1_000))
    expect(memory.recall('a.b.c', 1_000_000)).toBeUndefined()
    expect(memory.size).toBe(0)
  })

  it('recalls by the exact text only', () => {
    const memory = createVerifiedTokenMemory({ limit: 10, maxTokenLength: 100 })
    memory.remember('a.b.c', claims(1_000))
    expect(memory.recall('a.b.C', 0)).toBeUndefined()
    expect(memory.recall('a.b.c ', 0)).toBeUndefined()
    expect(memory.recall('a.b.c', 0)).toEqual(claims(1_000))
  })

  it('forgets the oldest entry past its limit', () => {
    const memory = createVerifiedTokenMemory({ limit: 2, maxTokenLength: 100 })
    memory.remember('one', claims(1_000))
    memory.remember('two', claims(1_000))
    memory.remember('three', claims(1_000))
    expect(memory.size).toBe(2)
    expect(memory.recall('one', 0)).toBeUndefined()
    expect(memory.recall('two', 0)).toEqual(claims(1_000))
    expect(memory.recall('three', 0)).toEqual(claims(1_000))
  })

  it('does not remember a token longer than its maximum length', () => {
    const memory = createVerifiedTokenMemory({ limit: 10, maxTokenLength: 5 })
    memory.remember('123456', claims(1_000))
    expect(memory.recall('123456', 0)).toBeUndefined()
    expect(memory.size).toBe(0)
  })
})
