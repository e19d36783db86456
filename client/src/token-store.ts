/** The Web Storage shape: `localStorage` and `sessionStorage` can be passed as they are. */
export interface TokenStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/** The pair the service issues (docs/api.md 2.2). */
export interface TokenPair {
  accessToken: string
  refreshToken: string
}

/** The pair kept as one item, so another tab always reads a whole pair, never one token of each. */
export interface TokenStore {
  read(): TokenPair | null
  /** The stored text as it is, to tell whether anything changed. */
  raw(): string | null
  write(pair: TokenPair): void
  clear(): void
}

/** A Map behind the Web Storage shape: the default, which keeps tokens in this client's memory only. */
export function createMemoryStorage(): TokenStorage {
  const items = new Map<string, string>()
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  }
}

export function createTokenStore(storage: TokenStorage, key: string): TokenStore {
  const raw = () => storage.getItem(key)
  return {
    raw,
    read() {
      try {
        const pair = JSON.parse(raw() ?? 'null') as Partial<TokenPair> | null
        return typeof pair?.accessToken === 'string' && typeof pair.refreshToken === 'string'
          ? { accessToken: pair.accessToken, refreshToken: pair.refreshToken }
          : null
      } catch {
        return null
      }
    },
    write: (pair) => storage.setItem(key, JSON.stringify(pair)),
    clear: () => storage.removeItem(key),
  }
}

/**
 * Resolves when another tab writes `key` (the window's `storage` event), or after `timeoutMs`; at once where there
 * is no window (Node). A browser delivers another tab's write to `localStorage` a little later than that tab made
 * it (Chromium keeps a copy of the storage in each renderer process), so a read right after another tab's refresh
 * can still show the pair it replaced.
 */
export function otherTabWrite(
  key: string,
  timeoutMs: number,
  target = globalThis as unknown as Pick<Window, 'addEventListener' | 'removeEventListener'>,
): Promise<void> {
  if (typeof target.addEventListener !== 'function') return Promise.resolve()
  return new Promise((resolve) => {
    const done = (event?: StorageEvent) => {
      if (event?.key === key || event?.key === null || !event) {
        clearTimeout(timer)
        target.removeEventListener('storage', done)
        resolve()
      }
    }
    const timer = setTimeout(done, timeoutMs)
    target.addEventListener('storage', done)
  })
}
