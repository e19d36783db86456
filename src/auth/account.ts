import type { AccountStatus, UserRecord } from '../storage/stores.js'
import type { TokenPair } from './token-service.js'

/** The account as the API shows it (docs/api.md §2.1): never the password hash. */
export interface Account {
  id: string
  email: string
  /** Whether the owner proved the address with a code sent there (docs/api.md §2.1, §4.15). */
  emailVerified: boolean
  createdAt: string
  /** ISO 8601 UTC with milliseconds: the latest change of profile, role or status. */
  updatedAt: string
  username: string | null
  nickname: string | null
  bio: string | null
  /** The avatar's id; the API shows its path (`avatar_url`, BASE_PATH included: http/account-data.ts). */
  avatarId: string | null
  role: string
  status: AccountStatus
  /** Whether the account has a usable password (an account made by a provider sign-in has none). */
  passwordSet: boolean
  /** The names of the linked providers, sorted. */
  providers: readonly string[]
}

export interface Session {
  account: Account
  tokens: Pick<TokenPair, 'accessToken' | 'refreshToken'>
  /** The id of the session the tokens belong to. */
  sessionId: string
}

/** The account as the API shows it. */
export function toAccount(user: UserRecord): Account {
  return {
    id: user.id,
    email: user.email,
    emailVerified: user.emailVerified,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
    username: user.username,
    nickname: user.nickname,
    bio: user.bio,
    avatarId: user.avatarId,
    role: user.role,
    status: user.status,
    passwordSet: user.passwordHash !== null,
    providers: user.providers,
  }
}
