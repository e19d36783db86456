/** What register and login take. */
export interface Credentials {
  email: string
  password: string
}

/** An account as register shows it (docs/api.md R4.3.1): the service returns no id there. */
export interface RegisteredAccount {
  /** The normalized address: trimmed and lower-cased (R2.1.3). */
  email: string
  /** When the account was registered, ISO 8601 in UTC (the API's `created_at`). */
  createdAt: string
}

/** An account as login and `GET /auth/me` show it (docs/api.md 2.1). */
export interface Account extends RegisteredAccount {
  /** 10 decimal digits. */
  id: string
}

interface AccountData {
  id?: string
  email: string
  created_at: string
}

/** The API's snake_case account fields as the client's camelCase ones; tokens are kept, never returned. */
export function toAccount(data: unknown): Account {
  const { id, email, created_at } = data as AccountData
  return { id: id as string, email, createdAt: created_at }
}
