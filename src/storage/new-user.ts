import type { UserRecord } from './stores.js'

/**
 * A new account's record: what its creation states, and the defaults of everything else (no profile, no avatar, no
 * provider, role `user`, active, updated when created).
 */
export function newUserRecord(
  fields: Pick<UserRecord, 'id' | 'email' | 'passwordHash' | 'emailVerified' | 'createdAt'> &
    Partial<Pick<UserRecord, 'nickname'>>,
): UserRecord {
  return {
    username: null,
    nickname: null,
    bio: null,
    avatarId: null,
    role: 'user',
    status: 'active',
    updatedAt: fields.createdAt,
    providers: [],
    ...fields,
  }
}
