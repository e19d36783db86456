/** One caller waiting for the value of its key. */
interface Waiter<V> {
  resolve(value: V | undefined): void
  reject(error: unknown): void
}

/**
 * Reads by key, made together: the keys asked for during one turn of the event loop are read at the end of that turn
 * (setImmediate) by `readMany`, at most `maxKeys` keys a call, and each caller gets the value of its own key
 * (undefined when `readMany` returns none for it). Under load the requests of a turn (every connection the poll found
 * readable) share one round trip to a database server, or on SQLite one read transaction, instead of paying one each;
 * a lone read waits for nothing but the end of its turn. A read starts after every caller of its batch has asked, so
 * it sees at least what each would have seen alone (every commit acknowledged before it asked). A failing read fails
 * each caller of its batch with the same error.
 */
export function batchedReads<V>(
  readMany: (keys: readonly string[]) => Promise<ReadonlyMap<string, V>>,
  maxKeys: number,
): (key: string) => Promise<V | undefined> {
  let pending = new Map<string, Array<Waiter<V>>>()

  const read = (batch: ReadonlyMap<string, Array<Waiter<V>>>) => {
    // a readMany that throws at once fails its batch as one that rejects does
    new Promise<ReadonlyMap<string, V>>((resolve) => resolve(readMany([...batch.keys()]))).then(
      (values) => {
        for (const [key, waiters] of batch) {
          const value = values.get(key)
          for (const waiter of waiters) waiter.resolve(value)
        }
      },
      (error: unknown) => {
        for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error)
      },
    )
  }

  const flush = () => {
    const asked = pending
    pending = new Map()
    let batch = new Map<string, Array<Waiter<V>>>()
    for (const [key, waiters] of asked) {
      batch.set(key, waiters)
      if (batch.size === maxKeys) {
        read(batch)
        batch = new Map()
      }
    }
    if (batch.size > 0) read(batch)
  }

  return (key) =>
    new Promise((resolve, reject) => {
      if (pending.size === 0) setImmediate(flush)
      const waiters = pending.get(key)
      if (waiters === undefined) pending.set(key, [{ resolve, reject }])
      else waiters.push({ resolve, reject })
    })
}

/** The one key of oncePerTurn's reads. */
const ONLY_KEY = ''

/**
 * `run` at most once a turn of the event loop: the callers of one turn share the run that starts at its end, once
 * they have all asked (as batchedReads), and each gets its outcome.
 */
export function oncePerTurn<T>(run: () => Promise<T>): () => Promise<T> {
  const read = batchedReads(async () => new Map([[ONLY_KEY, await run()]]), 1)
  return async () => (await read(ONLY_KEY)) as T
}
