/**
 * Access tokens verified recently, so that a client repeating its token on every call costs a map lookup instead of
 * an HMAC. Keyed by the token's own text (exact: no two tokens share an entry; fast-jwt's own cache hashes every
 * token with SHA-256, and without that hash `GET /auth/me` answers a third more requests). Only tokens that passed
 * verification are remembered, each until its `exp`, and only tokens no longer than `maxTokenLength`, so that the
 * memory stays a few megabytes; past `limit` entries the oldest is forgotten first.
 */
export interface VerifiedTokenMemory<T extends { exp: number }> {
  /** The claims remembered for `token`, or undefined when there are none or they expired (`exp * 1000 <= nowMs`). */
  recall(token: string, nowMs: number): T | undefined
  remember(token: string, claims: T): void
  readonly size: number
}

export function createVerifiedTokenMemory<T extends { exp: number }>(options: {
  limit: number
  maxTokenLength: number
}): VerifiedTokenMemory<T> {
  const entries = new Map<string, T>()
  return {
    recall(token, nowMs) {
      const claims = entries.get(token)
      if (claims === undefined || claims.exp * 1000 > nowMs) return claims
      entries.delete(token)
      return undefined
    },
    remember(token, claims) {
      if (token.length > options.maxTokenLength || options.limit < 1) return
      if (!entries.has(token) && entries.size >= options.limit) {
        const oldest = entries.keys().next()
        if (!oldest.done) entries.delete(oldest.value)
      }
      entries.set(token, claims)
    },
    get size() {
      return entries.size
    },
  }
}
