import { maskCredentials, quoted } from '../printable.js'
import { ConfigError } from './config-error.js'

export type Env = Readonly<Record<string, string | undefined>>

export type EnvReader = ReturnType<typeof createEnvReader>

/**
 * Reads variables from `env`, each trimmed, an empty one taken as unset. Every method throws a ConfigError of one line
 * that names the variable and quotes the bad value as shownValue does (a URL variable's never: it may carry a
 * password).
 */
export function createEnvReader(env: Env) {
  const raw = (name: string): string | undefined => {
    const value = env[name]?.trim()
    return value === undefined || value === '' ? undefined : value
  }
  const list = (name: string): string[] => {
    const value = raw(name)
    if (value === undefined) return []
    return value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '')
  }
  return {
    /** The value, or null when unset. */
    optional(name: string): string | null {
      return raw(name) ?? null
    },
    string(name: string, fallback: string): string {
      return raw(name) ?? fallback
    },
    oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
      const value = raw(name) ?? fallback
      if (!(allowed as readonly string[]).includes(value)) {
        throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got ${shownValue(value)}`)
      }
      return value as T
    },
    integer(name: string, fallback: number, range: { min: number; max?: number }): number {
      const value = raw(name)
      if (value === undefined) return fallback
      const parsed = /^-?\d+$/.test(value) ? Number(value) : Number.NaN
      const max = range.max ?? Number.MAX_SAFE_INTEGER
      if (!Number.isSafeInteger(parsed) || parsed < range.min || parsed > max) {
        const bounds = range.max === undefined ? `at least ${range.min}` : `from ${range.min} to ${range.max}`
        throw new ConfigError(name, `must be an integer ${bounds}, got ${shownValue(value)}`)
      }
      return parsed
    },
    /** A comma-separated list; blank items are dropped. */
    list,
    /** A comma-separated list whose every item passes `accept`; `expected` says what an item must be. */
    listOf(name: string, expected: string, accept: (item: string) => boolean): string[] {
      return list(name).map((item) => {
        if (!accept(item)) throw new ConfigError(name, `must list ${expected}, got ${shownValue(item)}`)
        return item
      })
    },
    /** An integer from 1 to `max`, or "auto" for `auto`. */
    countOrAuto(name: string, fallback: number, auto: number, max: number): number {
      const value = raw(name)
      if (value === undefined) return fallback
      if (value === 'auto') return auto
      const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN
      if (!Number.isSafeInteger(parsed) || parsed < 1 || parsed > max) {
        throw new ConfigError(name, `must be "auto" or an integer from 1 to ${max}, got ${shownValue(value)}`)
      }
      return parsed
    },
    /** A URL with one of `protocols` (such as `redis:`), or null when unset. */
    url(name: string, protocols: readonly string[]): string | null {
      const value = raw(name)
      if (value === undefined) return null
      if (!URL.canParse(value) || !protocols.includes(new URL(value).protocol)) {
        throw new ConfigError(
          name,
          `must be a URL starting with ${protocols.map((protocol) => `${protocol}//`).join(' or ')}`,
        )
      }
      return value
    },
  }
}

/**
 * A bad value as an error line quotes it: a credential inside any URL of it masked (`https://***@host`), control
 * characters escaped, a long value cut.
 */
export function shownValue(value: string): string {
  return quoted(maskCredentials(value))
}
