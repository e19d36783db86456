import type { TokenSubject } from '../auth/token-service.js'
import type { Clock } from '../clock.js'
import type { SessionMode } from '../config/session-config.js'
import { type RequestContext, type SecurityEventSink, securityEventRecorder } from '../security-event.js'
import type { SessionStore, StoredSession } from '../storage/stores.js'

/**
 * Whom a request is for, as its access token says: `sub`, and `sid` when it carries one (null for a token without:
 * AUTH_SESSIONS=single, or one issued before per-device was on).
 */
export type Caller = TokenSubject

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
  clock: Clock
  events: SecurityEventSink
  mode: SessionMode
}

/**
 * Listing and ending sessions: the one way access is ended (docs/api.md §3), for logout, `DELETE /auth/sessions/<id>`
 * and the operator's `tessera users revoke`. Each method records the event of what it ended.
 */
export interface SessionService {
  /** The caller's unexpired sessions, most recently used first. */
  list(caller: Caller): Promise<SessionView[]>
  /** Ends the caller's session `sessionId`; false when the caller has no such session (whether it exists or not). */
  end(caller: Caller, sessionId: string, context: RequestContext): Promise<boolean>
  /**
   * Logout: `current` ends the caller's own session (every session of the user for a token without `sid`: in single
   * mode the user's one session), `others` every other one, `all` all of them.
   */
  logout(caller: Caller, scope: LogoutScope, context: RequestContext): Promise<void>
  /**
   * Ends every session of the account but `except` (a session id; null ends all): what a password reset, a
   * password change and the proof of an impostor's address end (docs/api.md §4.15 to §4.18). Records no event: the
   * flow that calls it records its own. Resolves with how many ended.
   */
  endAccountSessions(userId: string, except: string | null): Promise<number>
}

export function createSessionService(deps: SessionServiceDeps): SessionService {
  const { store, clock, events, mode } = deps
  const record = securityEventRecorder(events, clock)
  // a token without sid names no session; in single mode the user's one session is the caller's all the same
  const isCurrent = (caller: Caller, session: StoredSession) =>
    caller.sessionId === null ? mode === 'single' : session.id === caller.sessionId

  return {
    async list(caller) {
      const sessions = await store.list(caller.userId, clock.now())
      return sessions.map((session) => ({
        id: session.id,
        createdAt: new Date(session.createdAt).toISOString(),
        lastUsedAt: new Date(session.lastUsedAt).toISOString(),
        device: session.device,
        clientAddress: session.clientAddress,
        current: isCurrent(caller, session),
      }))
    },

    async end(caller, sessionId, context) {
      const ended = await store.end(caller.userId, sessionId, clock.now())
      if (ended) record('session_ended', caller.userId, context)
      return ended
    },

    async logout(caller, scope, context) {
      const { userId, sessionId } = caller
      const now = clock.now()
      if (scope === 'current') {
        if (sessionId === null) await store.endAll(userId, now)
        else await store.end(userId, sessionId, now)
        record('logout', userId, context)
        return
      }
      if (scope === 'others') {
        // without sid the caller's own session is unknown: in single mode it is the one there is, so none is other
        if (sessionId !== null) await store.endAll(userId, now, sessionId)
        else if (mode === 'per-device') await store.endAll(userId, now)
        record('logout', userId, context, 'others')
        return
      }
      await store.endAll(userId, now)
      record('logout', userId, context, 'all')
    },

    endAccountSessions: (userId, except) => store.endAll(userId, clock.now(), except ?? undefined),
  }
}
