/** What login takes. */
export interface Credentials {
  email: string
  password: string
}

/** What register takes. */
export interface Registration extends Credentials {
  /**
   * The code mailed for the purpose `register` (`sendCode({ email, purpose: 'register' })`): marks the address
   * verified, and is needed when the service requires it (AUTH_REGISTER_CODE=required).
   */
  code?: string
}

/** An account as register, login, `GET /auth/me` and the account's changes show it (docs/api.md 2.1). */
export interface Account {
  /** 10 decimal digits. */
  id: string
  /** The normalized address: trimmed and lower-cased (R2.1.3). */
  email: string
  /** Whether the account has proved that it receives mail at `email` (the API's `email_verified`). */
  emailVerified: boolean
  /** When the account was registered, ISO 8601 in UTC (the API's `created_at`). */
  createdAt: string
}

interface AccountData {
  id: string
  email: string
  email_verified: boolean
  created_at: string
}

/** The API's snake_case account fields as the client's camelCase ones; tokens are kept, never returned. */
export function toAccount(data: unknown): Account {
  const { id, email, email_verified, created_at } = data as AccountData
  return { id, email, emailVerified: email_verified, createdAt: created_at }
}
