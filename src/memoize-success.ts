/**
 * `make()`'s promise, made at the first call and shared by every call after it, concurrent ones included; a promise
 * that rejects is not kept, so the call after it makes a new one (a discovery, a store read or a module load that
 * failed is tried again, not failed for good).
 */
export function memoizeSuccess<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | null = null
  return () => {
    made ??= make().catch((error: unknown) => {
      made = null
      throw error
    })
    return made
  }
}
