import type { Clock } from '../clock.js'
import type { SessionMode } from '../config/session-config.js'
import { AccessTokenInvalidError } from '../errors.js'
import { type RequestContext, type SecurityEventSink, securityEventRecorder } from '../security-event.js'
import type { SessionStore, StoredSession, UserStore } from '../storage/stores.js'
import type { Caller } from './caller.js'
import type { SessionEndReason } from './session-end-reason.js'
import { sessionTag } from './session-tag.js'

export type { Caller } from './caller.js'

/** A session as `GET /auth/sessions` shows it (docs/api.md §4.11). */
export interface SessionView {
  id: string
  /** ISO 8601 UTC with milliseconds, like an account's created_at. */
  createdAt: string
  lastUsedAt: string
  device: string
  clientAddress: string | null
  /** Whether it is the caller's own session. */
  current: boolean
}

/** Which sessions a logout ends (`POST /auth/delete-refresh-token?scope=`). */
export type LogoutScope = 'current' | 'others' | 'all'

export interface SessionServiceDeps {
  store: SessionStore
  /** Read when a caller has no session left to list: a deleted account's token is refused (docs/api.md R4.11.2). */
  users: Pick<UserStore, 'findById'>
  clock: Clock
  events: SecurityEventSink
  mode: SessionMode
  /**
   * Where each session ended is told (`session.ended`, docs/api.md R6.5.12), before the call resolves; absent, none.
   * Only when it is enabled are the ended sessions named (SessionStore.endAllReturningIds).
   */
  webhooks?: SessionEndings
}

/** Where the sessions a call ends are told (the account events: auth/account-events.ts implements it). */
export interface SessionEndings {
  /** Whether anything is told at all: false without WEBHOOK_URLS, and then no session ended is named. */
  readonly enabled: boolean
  /** One `session.ended` of `reason` for each of `sessionIds`; resolves once they are queued. */
  sessionsEnded(userId: string, sessionIds: readonly string[], reason: SessionEndReason): Promise<void>
}

/** A service whose ended sessions are told nowhere. */
const TOLD_NOWHERE: SessionEndings = Object.freeze({ enabled: false, sessionsEnded: async () => {} })

/**
 * Listing and ending sessions: the one way access is ended (docs/api.md §3), for logout, `DELETE /auth/sessions/<id>`
 * and the operator's `tessera users revoke`. Each method records the event of what it ended.
 */
export interface SessionService {
  /**
   * The caller's unexpired sessions, most recently used first. Throws AccessTokenInvalidError when the caller's
   * account no longer exists.
   */
  list(caller: Caller): Promise<SessionView[]>
  /**
   * Throws AccessTokenInvalidError unless the caller's session still exists (docs/api.md R5.3.1): the one named by its
   * token's `sid`, or else the one whose tag its `jti` carries. Whatever ended it (a logout of any scope, a reset, a
   * password change, a claim, a deletion, an operator, a newer login in single mode, eviction, reuse detection), the
   * store no longer has it, on every instance.
   */
  requireLive(caller: Caller): Promise<void>
  /** The caller's session, as requireLive finds it: what a check of its second factor reads (docs/api.md §4.25). */
  live(caller: Caller): Promise<StoredSession>
  /** Marks the caller's live session as established with the second factor (a TOTP factor confirmed by it). */
  markSecondFactor(caller: Caller): Promise<void>
  /** Ends the caller's session `sessionId`; false when the caller has no such session (whether it exists or not). */
  end(caller: Caller, sessionId: string, context: RequestContext): Promise<boolean>
  /**
   * Logout: `current` ends the caller's own session (every session of the user for a token without `sid`: in single
   * mode the user's one session), `others` every other one, `all` all of them.
   */
  logout(caller: Caller, scope: LogoutScope, context: RequestContext): Promise<void>
  /**
   * Ends every session of the account but `except` (a session id; null ends all): what a password reset, a
   * password change, a change of the second factors and the proof of an impostor's address end (docs/api.md §4.15 to
   * §4.18, §4.25). Records no security event (the flow that calls it records its own), but a `session.ended` webhook
   * event of `reason` for each session ended. Resolves with how many ended.
   */
  endAccountSessions(userId: string, except: string | null, reason: SessionEndReason): Promise<number>
}

const NONE: readonly string[] = Object.freeze([])

export function createSessionService(deps: SessionServiceDeps): SessionService {
  const { store, users, clock, events, mode } = deps
  const webhooks = deps.webhooks ?? TOLD_NOWHERE
  const record = securityEventRecorder(events, clock)
  // a token without sid names no session; in single mode the user's one session is the caller's all the same
  const isCurrent = (caller: Caller, session: StoredSession) =>
    caller.sessionId === null ? mode === 'single' : session.id === caller.sessionId

  const live = async (caller: Caller): Promise<StoredSession> => {
    const { userId, sessionId, sessionTag: tag } = caller
    const now = clock.now()
    // a sid names the session; without one, the tag of the jti is compared with the user's sessions' (at most one in
    // single mode): whole-session identities, so a token minted in the same second as a newer session's is not taken
    // for it
    const session =
      sessionId !== null
        ? await store.find(userId, { id: sessionId }, now)
        : tag === null
          ? null
          : ((await store.list(userId, now)).find((each) => sessionTag(each.id) === tag) ?? null)
    if (session === null) throw new AccessTokenInvalidError()
    return session
  }

  /**
   * Ends the user's sessions but `except`: resolves with how many, and with webhooks their ids (else none), for the
   * `session.ended` events the caller queues once it has recorded its own.
   */
  const endAll = async (userId: string, now: number, except?: string) => {
    if (!webhooks.enabled) return { count: await store.endAll(userId, now, except), ids: NONE }
    const ids = await store.endAllReturningIds(userId, now, except)
    return { count: ids.length, ids }
  }

  return {
    async list(caller) {
      const sessions = await store.list(caller.userId, clock.now())
      // no session: perhaps no account either, whose token is refused as GET /auth/me refuses it
      if (sessions.length === 0 && (await users.findById(caller.userId)) === null)
        throw new AccessTokenInvalidError()
      return sessions.map((session) => ({
        id: session.id,
        createdAt: new Date(session.createdAt).toISOString(),
        lastUsedAt: new Date(session.lastUsedAt).toISOString(),
        device: session.device,
        clientAddress: session.clientAddress,
        current: isCurrent(caller, session),
      }))
    },

    async requireLive(caller) {
      await live(caller)
    },

    live,

    async markSecondFactor(caller) {
      const session = await live(caller)
      if (!(await store.markSecondFactor(caller.userId, session.id, clock.now())))
        throw new AccessTokenInvalidError()
    },

    async end(caller, sessionId, context) {
      const ended = await store.end(caller.userId, sessionId, clock.now())
      if (ended) {
        record('session_ended', caller.userId, context)
        await webhooks.sessionsEnded(caller.userId, [sessionId], 'removed')
      }
      return ended
    },

    async logout(caller, scope, context) {
      const { userId, sessionId } = caller
      const now = clock.now()
      if (scope === 'current') {
        const ended =
          sessionId === null
            ? (await endAll(userId, now)).ids
            : (await store.end(userId, sessionId, now))
              ? [sessionId]
              : []
        record('logout', userId, context)
        await webhooks.sessionsEnded(userId, ended, 'logout')
        return
      }
      if (scope === 'others') {
        // without sid the caller's own session is unknown: in single mode it is the one there is, so none is other
        const ended =
          sessionId !== null
            ? (await endAll(userId, now, sessionId)).ids
            : mode === 'per-device'
              ? (await endAll(userId, now)).ids
              : []
        record('logout', userId, context, 'others')
        await webhooks.sessionsEnded(userId, ended, 'logout_others')
        return
      }
      const { ids } = await endAll(userId, now)
      record('logout', userId, context, 'all')
      await webhooks.sessionsEnded(userId, ids, 'logout_all')
    },

    async endAccountSessions(userId, except, reason) {
      const { count, ids } = await endAll(userId, clock.now(), except ?? undefined)
      await webhooks.sessionsEnded(userId, ids, reason)
      return count
    },
  }
}
