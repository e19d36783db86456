import type { TokenPair } from './token-service.js'

/** The account as the API shows it: never the password hash. */
export interface Account {
  id: string
  email: string
  /** Whether the owner proved the address with a code sent there (docs/api.md §2.1, §4.15). */
  emailVerified: boolean
  createdAt: string
}

export interface Session {
  account: Account
  tokens: Pick<TokenPair, 'accessToken' | 'refreshToken'>
  /** The id of the session the tokens belong to. */
  sessionId: string
}
