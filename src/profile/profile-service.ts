import type { Account } from '../auth/account.js'
import { toAccount } from '../auth/account.js'
import { type AccountEvents, NO_ACCOUNT_EVENTS } from '../auth/account-events.js'
import type { Clock } from '../clock.js'
import { AccessTokenInvalidError, UsernameTakenError, ValidationError } from '../errors.js'
import type { RecordSecurityEvent, RequestContext } from '../security-event.js'
import type { Profile, UserStore } from '../storage/stores.js'
import { type FieldProblem, normalizeBio, normalizeNickname, normalizeUsername } from './profile-rules.js'

/** What PUT /auth/profile asks: a string sets a field, null clears it, an absent field is left as it is. */
export interface ProfileChanges {
  username?: string | null
  nickname?: string | null
  bio?: string | null
}

/** The profile an account sets itself (docs/api.md §4.22). */
export interface ProfileService {
  /** Applies the changes to the caller's account and answers it. */
  update(userId: string, changes: ProfileChanges, context: RequestContext): Promise<Account>
}

export interface ProfileServiceDeps {
  users: Pick<UserStore, 'findById' | 'updateProfile'>
  clock: Clock
  record: RecordSecurityEvent
  /** Where `user.updated` goes (docs/api.md R6.5.9), queued before the answer; absent, nowhere. */
  webhooks?: Pick<AccountEvents, 'updated'>
}

export function createProfileService(deps: ProfileServiceDeps): ProfileService {
  const { users, clock, record } = deps
  const webhooks = deps.webhooks ?? NO_ACCOUNT_EVENTS
  return {
    async update(userId, changes, context) {
      const requested = normalizeChanges(changes)
      const user = await users.findById(userId)
      if (user === null) throw new AccessTokenInvalidError()
      const profile: Profile = {
        username: requested.username === undefined ? user.username : requested.username,
        nickname: requested.nickname === undefined ? user.nickname : requested.nickname,
        bio: requested.bio === undefined ? user.bio : requested.bio,
      }
      if (
        profile.username === user.username &&
        profile.nickname === user.nickname &&
        profile.bio === user.bio
      )
        return toAccount(user)
      const updatedAt = new Date(clock.now()).toISOString()
      const result = await users.updateProfile(userId, profile, updatedAt)
      if (result === 'username_taken') throw new UsernameTakenError()
      if (result === 'missing') throw new AccessTokenInvalidError()
      record('profile_updated', userId, context)
      await webhooks.updated(userId, ['profile'])
      return toAccount({ ...user, ...profile, updatedAt })
    },
  }
}

/** The changes as stored, or a 400 naming every field that breaks a rule; nothing is read or written before. */
function normalizeChanges(changes: ProfileChanges): ProfileChanges {
  const problems: FieldProblem[] = []
  const normalized: ProfileChanges = {}
  if (changes.username !== undefined) {
    const username = changes.username === null ? null : normalizeUsername(changes.username)
    if (username !== null && typeof username === 'object') problems.push(username)
    else normalized.username = username
  }
  if (changes.nickname !== undefined) {
    const nickname = changes.nickname === null ? null : normalizeNickname(changes.nickname)
    if (nickname !== null && typeof nickname === 'object') problems.push(nickname)
    else normalized.nickname = nickname
  }
  if (changes.bio !== undefined) {
    const bio = changes.bio === null ? null : normalizeBio(changes.bio)
    if (bio !== null && typeof bio === 'object') problems.push(bio)
    else normalized.bio = bio
  }
  if (problems.length > 0) throw new ValidationError(problems)
  return normalized
}
