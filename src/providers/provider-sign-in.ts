import { toAccount } from '../auth/account.js'
import { type AccountEvents, NO_ACCOUNT_EVENTS } from '../auth/account-events.js'
import { type AddressClaimDeps, claimUnverifiedAddress } from '../auth/address-claim.js'
import { normalizeEmail } from '../auth/email.js'
import { generateUserId } from '../auth/user-id.js'
import type { Clock } from '../clock.js'
import type { Mailer } from '../mail/mail-intent.js'
import { stripHiddenCharacters } from '../profile/hidden-characters.js'
import { NICKNAME_MAX_LENGTH, normalizeNickname } from '../profile/profile-rules.js'
import type { RecordSecurityEvent, RequestContext } from '../security-event.js'
import { newUserRecord } from '../storage/new-user.js'
import type { ProviderLinkStore, UserRecord, UserStore } from '../storage/stores.js'
import type { ProviderIdentity } from './provider-client.js'
import type { SignInFailure } from './sign-in-failure.js'

export interface ProviderSignInDeps {
  users: Pick<UserStore, 'findById' | 'findByEmail' | 'create' | 'delete' | 'claimAddress'>
  links: Pick<ProviderLinkStore, 'find' | 'link' | 'unlink' | 'unlinkAll'>
  /** Ends an impostor's sessions when a provider proves an unverified account's address. */
  sessions: AddressClaimDeps['sessions']
  /** Removes an impostor's second factors when a provider proves an unverified account's address. */
  factors: AddressClaimDeps['factors']
  /** Copies a new account's provider picture into its avatar (never throws); null when there are no avatars. */
  avatars: { importPicture(userId: string, url: string): Promise<string | null> } | null
  mailer: Mailer
  record: RecordSecurityEvent
  log: AddressClaimDeps['log'] & { error(fields: Record<string, unknown>, message: string): void }
  clock: Clock
  /** The webhook events of an account made, linked, claimed or unlinked (docs/api.md R6.5.9); absent, none. */
  webhooks?: AccountEvents
}

/** How a provider sign-in found its account: linked before, linked now by its address, or made now. */
export type SignInMatch = 'linked_before' | 'linked_by_email' | 'created'

/** The account a provider sign-in signs in to (its session not started yet), or why there is none. */
export type SignInResolution = { user: UserRecord; match: SignInMatch } | { failure: SignInFailure }

/** Which account a provider account signs in to, and unlinking (docs/api.md §4.24). */
export interface ProviderSignIn {
  /**
   * The rules, in order: the account linked to the provider account; else, when the provider vouches for the
   * address, the account that has it, linked now (its owner told by mail) and, if its address was not verified,
   * taken over as by the first proof of an address (§4.15); else a new account without a password. An address the
   * provider does not vouch for never links to an account that has it. A disabled account is a failure like any.
   */
  resolve(provider: string, identity: ProviderIdentity, context: RequestContext): Promise<SignInResolution>
  /** DELETE /auth/oauth/<provider>: unlinks the account's account of the provider, unless it is its only way in. */
  unlink(
    userId: string,
    provider: string,
    context: RequestContext,
  ): Promise<'unlinked' | 'not_linked' | 'only_way_in'>
}

/** Ids drawn before giving up: a collision of random 10-digit ids is rare, three in a row is a fault. */
const ID_ATTEMPTS = 5

export function createProviderSignIn(deps: ProviderSignInDeps): ProviderSignIn {
  const { users, links, record, log } = deps
  const webhooks = deps.webhooks ?? NO_ACCOUNT_EVENTS

  /**
   * Tells the account's address of the link (docs/api.md §6.4): the change is made whether or not the notice could
   * be queued, and a store that fails now is logged, not turned into a failed sign-in.
   */
  const notifyLinked = async (user: UserRecord, provider: string, context: RequestContext) => {
    if (!deps.mailer.available) return
    try {
      await deps.mailer.queue(
        user.email,
        { kind: 'notice', notice: 'provider_linked', values: { provider } },
        user.id,
        context.language,
      )
    } catch (error) {
      log.error({ err: error, userId: user.id, event: 'mail_queued' }, 'a notice could not be queued')
    }
  }

  /** Links the account found by its address; the owner of an address the provider vouches for is its owner here. */
  const linkByEmail = async (
    user: UserRecord,
    provider: string,
    identity: ProviderIdentity,
    email: string,
    context: RequestContext,
  ): Promise<SignInResolution> => {
    if (user.status !== 'active') return refuse(user, context)
    // an unverified account is taken over: its earlier password and sessions may be an impostor's (§4.15)
    const proved = await claimUnverifiedAddress(
      { users, providerLinks: links, factors: deps.factors, sessions: deps.sessions, record, log, webhooks },
      user,
      context,
    )
    const linked = await links.link({
      provider,
      subject: identity.subject,
      userId: user.id,
      email,
      createdAt: deps.clock.now(),
    })
    if (linked !== 'linked') {
      // a concurrent sign-in of this provider account linked it first, to this very account: signed in all the
      // same; otherwise the account has another account of this provider, and the sign-in fails
      const link = linked === 'taken' ? await links.find(provider, identity.subject) : null
      if (link?.userId !== user.id) return { failure: 'failed' }
      return { user: withProvider(proved, provider), match: 'linked_before' }
    }
    record('provider_linked', user.id, context)
    await webhooks.updated(user.id, ['providers'])
    await notifyLinked(user, provider, context)
    return { user: withProvider(proved, provider), match: 'linked_by_email' }
  }

  /** A new account for the provider account: no password, the provider's name and picture. */
  const create = async (
    provider: string,
    identity: ProviderIdentity,
    email: string,
    context: RequestContext,
  ): Promise<SignInResolution | 'again'> => {
    const createdAt = new Date(deps.clock.now()).toISOString()
    for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
      const user = newUserRecord({
        id: generateUserId(),
        email,
        passwordHash: null,
        emailVerified: identity.emailVerified,
        createdAt,
        nickname: nicknameOf(identity.name),
      })
      const created = await users.create(user)
      if (created === 'id_taken') continue
      if (created === 'email_taken') return 'again'
      const linked = await links.link({
        provider,
        subject: identity.subject,
        userId: user.id,
        email,
        createdAt: deps.clock.now(),
      })
      // a concurrent sign-in of the same provider account linked it first: to this new account (found by its address
      // between its creation and this link), which stands; or to another, and this one goes, never to be answered
      if (linked !== 'linked') {
        const link = linked === 'taken' ? await links.find(provider, identity.subject) : null
        // 'missing': the new account was deleted meanwhile
        if (link === null) return { failure: 'failed' }
        if (link.userId !== user.id) {
          await users.delete(user.id)
          return 'again'
        }
      }
      record('registered', user.id, context, 'provider')
      if (user.emailVerified) record('email_verified', user.id, context)
      const avatarId =
        identity.picture === null || deps.avatars === null
          ? null
          : await deps.avatars.importPicture(user.id, identity.picture)
      const made = { ...withProvider(user, provider), avatarId }
      // with its link and picture: the account as the sign-in's answer shows it
      await webhooks.created(toAccount(made))
      return { user: made, match: 'created' }
    }
    throw new Error(`no free user id after ${ID_ATTEMPTS} attempts`)
  }

  /** A failure for an account that exists: recorded against it, answered like any failure. */
  const refuse = (user: UserRecord, context: RequestContext): SignInResolution => {
    record('login_failed', user.id, context, 'disabled')
    return { failure: 'failed' }
  }

  const resolveOnce = async (
    provider: string,
    identity: ProviderIdentity,
    context: RequestContext,
  ): Promise<SignInResolution | 'again'> => {
    const link = await links.find(provider, identity.subject)
    if (link !== null) {
      const user = await users.findById(link.userId)
      if (user === null) return { failure: 'failed' }
      if (user.status !== 'active') return refuse(user, context)
      return { user, match: 'linked_before' }
    }
    const email = identity.email === null ? null : normalizeEmail(identity.email)
    if (email === null) return { failure: 'email_missing' }
    const existing = await users.findByEmail(email)
    if (existing !== null) {
      if (identity.emailVerified) return linkByEmail(existing, provider, identity, email, context)
      // whoever controls a provider account that merely claims the address is not its owner
      record('login_failed', existing.id, context, 'unverified_email')
      return { failure: 'email_unverified' }
    }
    return create(provider, identity, email, context)
  }

  return {
    async resolve(provider, identity, context) {
      // a concurrent registration or sign-in took the address or the link between the reads and the writes: the
      // second look finds what it made
      const first = await resolveOnce(provider, identity, context)
      if (first !== 'again') return first
      const second = await resolveOnce(provider, identity, context)
      return second === 'again' ? { failure: 'failed' } : second
    },

    async unlink(userId, provider, context) {
      const result = await links.unlink(userId, provider)
      if (result === 'unlinked') {
        record('provider_unlinked', userId, context)
        await webhooks.updated(userId, ['providers'])
      }
      return result
    },
  }
}

/** The account with `provider` among its providers (sorted, as the store reads them). */
function withProvider(user: UserRecord, provider: string): UserRecord {
  return { ...user, providers: [...new Set([...user.providers, provider])].sort() }
}

/**
 * The provider's name as a nickname: its controls dropped, and the characters that hide or reorder text that a
 * nickname of PUT /auth/profile refuses (R4.22.2); trimmed, cut to 64 characters (code points); null when nothing is
 * left. A name is the provider's to give: it is cleaned, not refused.
 */
function nicknameOf(name: string | null): string | null {
  if (name === null) return null
  const text = stripHiddenCharacters(name.toWellFormed().replace(/[\p{Cc}\u2028\u2029]/gu, ' ')).trim()
  // the cut may leave half an emoji sequence: a joiner or selector at the end, which goes too
  const cut = stripHiddenCharacters([...text].slice(0, NICKNAME_MAX_LENGTH).join(''))
  const nickname = normalizeNickname(cut)
  return typeof nickname === 'string' ? nickname : null
}
