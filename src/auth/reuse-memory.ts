/**
 * The refresh tokens whose reuse this process has recorded, so that a token replayed again and again is one `reused`
 * event and then `replayed` ones, which the audit trail bounds (docs/api.md R6.3.4): a client that keeps its own
 * replaced token can send it at will. Keyed by the token's digest; past `limit` tokens the oldest is forgotten first
 * (its next replay is then recorded as a reuse again, once). Each process remembers its own.
 */
export interface ReuseMemory {
  /** True the first time a token's reuse is reported, false for every later report of the same token. */
  isFirstReuse(digest: string): boolean
}

export function createReuseMemory(limit: number): ReuseMemory {
  const seen = new Set<string>()
  return {
    isFirstReuse(digest) {
      if (seen.has(digest)) return false
      if (seen.size >= limit) {
        const oldest = seen.values().next()
        if (!oldest.done) seen.delete(oldest.value)
      }
      seen.add(digest)
      return true
    },
  }
}
