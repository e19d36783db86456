import { describe, expect, it } from 'vitest'
import { batchedReads, oncePerTurn } from '../src/batched-reads.js'

/** A readMany over `values` that records the keys of each call. */
function recording(values: Map<string, number>) {
  const calls: string[][] = []
  const readMany = async (keys: readonly string[]) => {
    calls.push([...keys])
    return new Map(keys.flatMap((key) => (values.has(key) ? [[key, values.get(key) ?? 0] as const] : [])))
  }
  return { calls, readMany }
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('batchedReads', () => {
  it('reads the keys asked in one turn with one call, each caller getting its own value or undefined', async () => {
    const { calls, readMany } = recording(
      new Map([
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ]),
    )
    const read = batchedReads(readMany, 64)
    const values = await Promise.all([read('a'), read('b'), read('missing'), read('a'), read('c')])
    expect(values).toEqual([1, 2, undefined, 1, 3])
    // each key once
    expect(calls).toEqual([['a', 'b', 'missing', 'c']])
  })

  it('reads keys asked in later turns with calls of their own', async () => {
    const { calls, readMany } = recording(
      new Map([
        ['a', 1],
        ['b', 2],
      ]),
    )
    const read = batchedReads(readMany, 64)
    expect(await read('a')).toBe(1)
    const second = read('b')
    await nextTurn()
    const third = read('a')
    expect([await second, await third]).toEqual([2, 1])
    expect(calls).toEqual([['a'], ['b'], ['a']])
  })

  it('splits a turn of more than maxKeys keys into calls of at most maxKeys', async () => {
    const values = new Map(Array.from({ length: 10 }, (_, i) => [`k${i}`, i] as const))
    const { calls, readMany } = recording(values)
    const read = batchedReads(readMany, 4)
    expect(await Promise.all([...values.keys()].map(read))).toEqual([...values.values()])
    expect(calls.map((keys) => keys.length)).toEqual([4, 4, 2])
  })

  it('reads at the end of the turn: a value changed after the ask, in the same turn, is the one read', async () => {
    const values = new Map([['a', 1]])
    const read = batchedReads(recording(values).readMany, 64)
    const value = read('a')
    values.set('a', 2)
    expect(await value).toBe(2)
  })

  it('fails every caller of a failing batch with its error, and no other batch', async () => {
    let failing = true
    const read = batchedReads(async (keys) => {
      if (failing && keys.includes('bad')) throw new Error('the database is gone')
      return new Map(keys.map((key) => [key, key.length]))
    }, 2)
    const results = await Promise.allSettled([read('bad'), read('xx'), read('yyy')])
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'fulfilled'])
    expect(results[0]).toMatchObject({ reason: { message: 'the database is gone' } })
    expect(results[2]).toMatchObject({ value: 3 })
    failing = false
    expect(await read('bad')).toBe(3)
  })

  it('fails the batch of a readMany that throws at once, as one that rejects', async () => {
    const read = batchedReads<number>(() => {
      throw new Error('thrown at once')
    }, 64)
    await expect(Promise.all([read('a'), read('b')])).rejects.toThrow('thrown at once')
    await expect(read('c')).rejects.toThrow('thrown at once')
  })
})

describe('oncePerTurn', () => {
  it('runs once for the callers of a turn, and again in a later turn', async () => {
    let runs = 0
    const check = oncePerTurn(async () => ++runs)
    expect(await Promise.all([check(), check(), check()])).toEqual([1, 1, 1])
    expect(await check()).toBe(2)
  })

  it('gives each caller of a turn the failure of its run', async () => {
    const check = oncePerTurn<number>(async () => {
      throw new Error('down')
    })
    const results = await Promise.allSettled([check(), check()])
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected'])
  })
})
