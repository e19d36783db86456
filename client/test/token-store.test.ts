import { describe, expect, it } from 'vitest'
import { createTokenStore, otherTabWrite } from '../src/token-store.js'
import { createSharedStorage } from './service.js'

describe('the token store', () => {
  it('keeps the pair as one item and reads anything else as no pair', () => {
    const storage = createSharedStorage()
    const store = createTokenStore(storage, 'tokens')
    store.write({ accessToken: 'a', refreshToken: 'r' })
    expect([...storage.items]).toEqual([['tokens', '{"accessToken":"a","refreshToken":"r"}']])
    expect(store.read()).toEqual({ accessToken: 'a', refreshToken: 'r' })
    for (const junk of [
      'not json',
      '{"accessToken":"a"}',
      '[]',
      'null',
      '{"accessToken":1,"refreshToken":"r"}',
    ]) {
      storage.setItem('tokens', junk)
      expect(store.read()).toBeNull()
    }
    store.clear()
    expect(storage.items.size).toBe(0)
  })
})

describe('waiting for another tab to write', () => {
  const storageEvent = (key: string | null) => Object.assign(new Event('storage'), { key })

  it('ends at the storage event of the key (or a clear), not of another key', async () => {
    for (const key of ['tokens', null]) {
      const window = new EventTarget()
      let ended = false
      const waiting = otherTabWrite('tokens', 10_000, window as never).then(() => (ended = true))
      window.dispatchEvent(storageEvent('other'))
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(ended).toBe(false)
      window.dispatchEvent(storageEvent(key))
      await waiting
      expect(ended).toBe(true)
    }
  })

  it('ends after the timeout when no write comes, and at once where there is no window (Node)', async () => {
    const started = Date.now()
    await otherTabWrite('tokens', 100, new EventTarget() as never)
    expect(Date.now() - started).toBeGreaterThanOrEqual(90)
    const noWindow = Date.now()
    await otherTabWrite('tokens', 10_000)
    // not the 10 s it would wait: the bound leaves a loaded machine room
    expect(Date.now() - noWindow).toBeLessThan(5_000)
  })
})
