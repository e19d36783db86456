import { camelCased } from './camel-cased.js'

/**
 * One of the account's sessions as `GET /auth/sessions` shows it: one device's login (or registration), with a
 * refresh token of its own, until it logs out, is ended, or goes unused until its refresh token expires.
 */
export interface Session {
  /** 32 hexadecimal digits: what `endSession` takes. */
  id: string
  /** When the device logged in, ISO 8601 in UTC (the API's `created_at`). */
  createdAt: string
  /** When the device logged in or last refreshed its tokens, ISO 8601 in UTC (the API's `last_used_at`). */
  lastUsedAt: string
  /** A short description of the device, from its User-Agent, such as `Firefox on Linux`; `''` when unknown. */
  device: string
  /** The device's network, coarsened by the service: `203.0.113.0/24`, `2001:db8:1::/48`; null when unknown. */
  clientAddress: string | null
  /** Whether it is the session of this client's own tokens (shared by the tabs that share its storage). */
  current: boolean
}

/** Which sessions a scoped `logout` ends: the caller's other ones (this one stays), or all of them (this one too). */
export type LogoutScope = 'others' | 'all'

/** The API's sessions as the client shows them, in the service's order (most recent first). */
export function toSessions(data: unknown): Session[] {
  return (data as object[]).map(camelCased) as unknown as Session[]
}
