import { camelCased } from './camel-cased.js'

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

/**
 * An account as register, login, `GET /auth/me` and the account's changes show it (docs/api.md 2.1). What is not set
 * is null.
 */
export interface Account {
  /** 10 decimal digits. */
  id: string
  /** The normalized address: trimmed and lower-cased (R2.1.3). */
  email: string
  /** Whether the account has proved that it receives mail at `email` (the API's `email_verified`). */
  emailVerified: boolean
  /** Unique among the accounts: 3 to 32 of `a-z 0-9 _ . -`, as the service stored it (lower-cased). */
  username: string | null
  /** The name the account shows, 1 to 64 characters. */
  nickname: string | null
  /**
   * Where the avatar is: the API's `avatar_url`, a path on the service's origin, made absolute with `baseUrl` when
   * that is absolute (an `<img src>` of another origin's page finds it). A new upload has a new URL.
   */
  avatarUrl: string | null
  /** At most 500 characters. */
  bio: string | null
  /** `user`, or a role an operator gave the account. */
  role: string
  /** `disabled` when an operator disabled the account, which then cannot log in or refresh. */
  status: 'active' | 'disabled'
  /** Whether the account has a password (the API's `password_set`): one made by a provider sign-in has none. */
  passwordSet: boolean
  /** The names of the providers linked to the account (`google`, …), sorted. */
  providers: string[]
  /** When the account was registered, ISO 8601 in UTC (the API's `created_at`). */
  createdAt: string
  /** The latest change of its profile, role or status, ISO 8601 in UTC (the API's `updated_at`). */
  updatedAt: string
}

/** The profile fields `updateProfile` sets: a string sets one, null clears it, a field left out stays as it is. */
export interface ProfileChanges {
  username?: string | null
  nickname?: string | null
  bio?: string | null
}

/**
 * An account of the API (docs/api.md 2.1) as the client shows it. `root`, the service's absolute base URL ('' when
 * it is relative), makes the avatar's path absolute.
 */
export function toAccount(data: unknown, root: string): Account {
  const account = camelCased(data as object) as unknown as Account
  if (account.avatarUrl && root) account.avatarUrl = new URL(account.avatarUrl, root).href
  return account
}
