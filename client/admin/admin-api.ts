// The admin API (docs/api.md §4.27) as the console calls it: through the client library's `fetch`, which sends the
// access token and refreshes it once on a 401 (spec 5.6). Shapes as the API names them (snake_case).

import type { FieldError, TesseraClient, TesseraError } from './client.js'

/** An account, as `GET /auth/me` answers it (docs/api.md 2.1). */
export interface AdminUser {
  id: string
  email: string
  email_verified: boolean
  username: string | null
  nickname: string | null
  avatar_url: string | null
  bio: string | null
  role: string
  status: 'active' | 'disabled'
  password_set: boolean
  providers: string[]
  created_at: string
  updated_at: string
}

/** One of an account's sessions: as `GET /auth/sessions` shows one, and whether it was established with a factor. */
export interface AdminSession {
  id: string
  created_at: string
  last_used_at: string
  expires_at?: string
  device: string
  client_address: string | null
  second_factor: boolean
}

/** One of an account's second factors. */
export interface AdminFactor {
  id: string
  type: string
  name: string
  created_at: string
}

/** One event of the audit trail (docs/api.md §6.3), with the admin who caused it, if one did. */
export interface AuditEvent {
  id: string | number
  kind: string
  user_id: string | null
  /** ISO 8601, or epoch milliseconds. */
  at: string | number
  ip: string | null
  reason: string | null
  /** The id of the admin who acted; null for any other event. */
  actor: string | null
}

/** An account with what the console shows beside it. */
export interface AccountDetail {
  user: AdminUser
  sessions: AdminSession[]
  factors: AdminFactor[]
  /** Its most recent events, newest first. */
  events: AuditEvent[]
}

/** A page of a list, and the cursor of the next one (null on the last). */
export interface Page<Item> {
  items: Item[]
  next: string | null
}

export interface AuditFilters {
  /** A user id. */
  user?: string
  /** An event kind, such as `account_disabled`. */
  kind?: string
  /** ISO 8601. */
  since?: string
}

export interface AdminApi {
  users(query: string, limit: number, after: string | null): Promise<Page<AdminUser>>
  account(id: string): Promise<AccountDetail>
  /** `PUT /admin/users/<id>`: a role, a status, or both. */
  update(
    id: string,
    changes: { role?: string; status?: 'active' | 'disabled' },
  ): Promise<{ user: AdminUser; changed: boolean; sessions_ended: number }>
  revoke(id: string): Promise<{ sessions_ended: number }>
  resetSecondFactor(id: string): Promise<{ factors_removed: number; sessions_ended: number }>
  remove(id: string): Promise<void>
  audit(filters: AuditFilters, limit: number, after: string | null): Promise<Page<AuditEvent>>
}

type ErrorClass = typeof TesseraError

/** The API's envelope (docs/api.md R1.1, R1.2), as far as the console reads it. */
interface Envelope {
  message?: string
  data?: { errors?: FieldError[] } | null
}

/** A query string of the parameters that have a value. */
function query(parameters: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== null && value !== undefined && value !== '') search.set(name, String(value))
  }
  const text = search.toString()
  return text === '' ? '' : `?${text}`
}

export function createAdminApi(client: TesseraClient, Failure: ErrorClass): AdminApi {
  /** The envelope's `data` (docs/api.md R1.1), or the TesseraError of its error (R1.2), as the library makes them. */
  async function call(path: string, init?: RequestInit): Promise<unknown> {
    const response = await client.fetch(path, init)
    let body: Envelope | null = null
    try {
      body = (await response.json()) as Envelope
    } catch {
      // a 204, or not JSON (a proxy's error page): the status alone speaks
    }
    if (response.ok) return body?.data
    const retryAfter = response.headers.get('Retry-After')
    throw new Failure(
      response.status,
      body?.message ?? (response.statusText || `HTTP ${response.status}`),
      body?.data?.errors ?? [],
      undefined,
      retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : null,
    )
  }
  const user = (id: string) => `/admin/users/${encodeURIComponent(id)}`
  const json = (method: string, body: unknown): RequestInit => ({
    method,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  })

  return {
    async users(search, limit, after) {
      const data = (await call(`/admin/users${query({ query: search, limit, after })}`)) as {
        users: AdminUser[]
        next: string | null
      }
      return { items: data.users, next: data.next }
    },
    account: async (id) => (await call(user(id))) as AccountDetail,
    update: async (id, changes) =>
      (await call(user(id), json('PUT', changes))) as Awaited<ReturnType<AdminApi['update']>>,
    revoke: async (id) =>
      (await call(`${user(id)}/revoke`, { method: 'POST' })) as { sessions_ended: number },
    resetSecondFactor: async (id) =>
      (await call(`${user(id)}/mfa-reset`, { method: 'POST' })) as Awaited<
        ReturnType<AdminApi['resetSecondFactor']>
      >,
    async remove(id) {
      await call(user(id), { method: 'DELETE' })
    },
    async audit(filters, limit, after) {
      const data = (await call(`/admin/audit${query({ ...filters, limit, after })}`)) as {
        events: AuditEvent[]
        next: string | null
      }
      return { items: data.events, next: data.next }
    },
  }
}
