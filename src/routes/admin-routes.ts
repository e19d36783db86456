import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { AdminService } from '../admin/admin-service.js'
import { parseIsoTime } from '../audit/audit-time.js'
import { toAccount } from '../auth/account.js'
import type { Actor } from '../auth/user-admin.js'
import { isUserId } from '../auth/user-id.js'
import { ValidationError } from '../errors.js'
import { accountData } from '../http/account-data.js'
import {
  AdminAuditQuery,
  AdminUserBody,
  AdminUserParams,
  AdminUsersQuery,
  AUDIT_PAGE,
  adminAuditResponses,
  adminDeleteResponses,
  adminMfaResetResponses,
  adminRevokeResponses,
  adminUpdateResponses,
  adminUserResponses,
  adminUsersResponses,
  USERS_PAGE,
} from '../http/admin-schemas.js'
import { success } from '../http/envelope.js'
import { message } from '../language/message.js'
import type { StoredAuditEvent, StoredSession, UserRecord } from '../storage/stores.js'
import { BEARER_AUTH, requestContext } from './route-parts.js'

export interface AdminRoutesOptions {
  admin: AdminService
  /** BASE_PATH, which an account's `avatar_url` carries. */
  basePath: string
  /** R8.1's per-route limit of the changes, as the other writes have it; null when limiting is off. */
  rateLimit: { max: number; timeWindow: number } | null
}

const iso = (epochMs: number) => new Date(epochMs).toISOString()

/** A query parameter that is no good: the 400 of R1.6, naming it. */
const badParameter = (name: string, problem: string) =>
  new ValidationError([{ field: `/${name}`, message: message(problem) }])

/** One event as the admin API shows it (docs/api.md R4.27.9). */
function eventData(event: StoredAuditEvent) {
  return {
    id: event.id,
    kind: event.type,
    user_id: event.userId,
    at: iso(event.at),
    ip: event.clientAddress,
    reason: event.reason,
    actor: event.actor ?? null,
    request_id: event.requestId,
    omitted: event.omitted ?? null,
  }
}

function sessionData(session: StoredSession) {
  return {
    id: session.id,
    created_at: iso(session.createdAt),
    last_used_at: iso(session.lastUsedAt),
    expires_at: iso(session.expiresAt),
    device: session.device,
    client_address: session.clientAddress,
    second_factor: session.secondFactor,
  }
}

/** The admin who asks, as the user admin records them: their id, the request's address and id. */
const actorOf = (request: FastifyRequest): Actor => ({
  kind: 'admin',
  id: request.adminId,
  context: requestContext(request),
})

/**
 * docs/api.md §4.27: the admin API, registered inside the scope whose hooks authenticate the caller and check that it
 * is an admin at every request (http/admin-check.ts).
 */
export const adminRoutes: FastifyPluginAsyncTypebox<AdminRoutesOptions> = async (
  app,
  { admin, basePath, rateLimit },
) => {
  const account = (user: UserRecord) => accountData(toAccount(user), basePath)
  const config = { rateLimit: rateLimit ?? false }

  app.get(
    '/admin/users',
    {
      schema: {
        operationId: 'adminListUsers',
        tags: ['admin'],
        summary: 'Find accounts',
        description:
          'Accounts in id order, a page at a time (keyset: `after` is the `next` of the page before), optionally those whose e-mail address or username starts with `query`, in any case.',
        security: BEARER_AUTH,
        querystring: AdminUsersQuery,
        response: adminUsersResponses(),
      },
    },
    async (request) => {
      const { query = '', limit, after } = request.query
      if (after !== undefined && !isUserId(after)) throw badParameter('after', 'field.cursor')
      const page = await admin.users({
        prefix: query.trim(),
        after,
        limit: limit === undefined ? USERS_PAGE.default : Number(limit),
      })
      return success({ users: page.users.map(account), next: page.next })
    },
  )

  app.get(
    '/admin/users/:id',
    {
      schema: {
        operationId: 'adminGetUser',
        tags: ['admin'],
        summary: 'One account',
        description:
          'The account, as GET /auth/me shows it, with its sessions (their expiry and whether a second factor established them), its confirmed second factors and its 20 latest audit events.',
        security: BEARER_AUTH,
        params: AdminUserParams,
        response: adminUserResponses(),
      },
    },
    async (request) => {
      const view = await admin.user(request.params.id)
      return success({
        user: account(view.user),
        sessions: view.sessions.map(sessionData),
        factors: view.factors.map((factor) => ({
          id: factor.id,
          type: factor.type,
          name: factor.name,
          created_at: iso(factor.createdAt),
        })),
        events: view.events.map(eventData),
      })
    },
  )

  app.put(
    '/admin/users/:id',
    {
      config,
      schema: {
        operationId: 'adminUpdateUser',
        tags: ['admin'],
        summary: "Change an account's role or status",
        description:
          "Gives the account a role, disables it or enables it again (the role first, when both are given). A change of role or a disable ends the account's sessions. An admin cannot demote or disable their own account, nor the last active admin (409).",
        security: BEARER_AUTH,
        params: AdminUserParams,
        body: AdminUserBody,
        response: adminUpdateResponses(),
      },
    },
    async (request) => {
      const { role, status } = request.body
      if (role === undefined && status === undefined)
        throw new ValidationError([{ field: '', message: message('field.role_or_status') }])
      const change = await admin.update(request.params.id, { role, status }, actorOf(request))
      return success({
        user: account(change.user),
        changed: change.changed,
        sessions_ended: change.sessionsEnded,
      })
    },
  )

  app.post(
    '/admin/users/:id/revoke',
    {
      config,
      schema: {
        operationId: 'adminRevokeSessions',
        tags: ['admin'],
        summary: 'End every session of an account',
        description:
          'Logs the account out everywhere: its refresh tokens are refused from now on, and its access tokens change nothing more.',
        security: BEARER_AUTH,
        params: AdminUserParams,
        response: adminRevokeResponses(),
      },
    },
    async (request) => success({ sessions_ended: await admin.revoke(request.params.id, actorOf(request)) }),
  )

  app.post(
    '/admin/users/:id/mfa-reset',
    {
      config,
      schema: {
        operationId: 'adminResetSecondFactors',
        tags: ['admin'],
        summary: "Remove an account's second factors",
        description:
          'Removes every second factor and recovery code of the account (a lost phone) and ends its sessions: it signs in with its first factor alone again.',
        security: BEARER_AUTH,
        params: AdminUserParams,
        response: adminMfaResetResponses(),
      },
    },
    async (request) => {
      const reset = await admin.mfaReset(request.params.id, actorOf(request))
      return success({ factors_removed: reset.factorsRemoved, sessions_ended: reset.sessionsEnded })
    },
  )

  app.delete(
    '/admin/users/:id',
    {
      config,
      schema: {
        operationId: 'adminDeleteUser',
        tags: ['admin'],
        summary: 'Delete an account',
        description:
          'Deletes the account with its sessions, codes and queued mail; its audit events are kept until the retention prunes them, their client addresses erased. An admin cannot delete their own account, nor the last active admin (409).',
        security: BEARER_AUTH,
        params: AdminUserParams,
        response: adminDeleteResponses(),
      },
    },
    async (request, reply) => {
      await admin.delete(request.params.id, actorOf(request))
      return reply.code(204).send()
    },
  )

  app.get(
    '/admin/audit',
    {
      schema: {
        operationId: 'adminListAuditEvents',
        tags: ['admin'],
        summary: 'Read the audit trail',
        description:
          'Security events, newest first, a page at a time (keyset: `after` is the `next` of the page before), optionally of one user, of one kind, or from a time on.',
        security: BEARER_AUTH,
        querystring: AdminAuditQuery,
        response: adminAuditResponses(),
      },
    },
    async (request) => {
      const { user, kind, since, limit, after } = request.query
      const from = since === undefined ? undefined : (parseIsoTime(since) ?? epochMs(since))
      if (from === null) throw badParameter('since', 'field.since')
      const position = after === undefined ? undefined : admin.cursor(after)
      if (position === null) throw badParameter('after', 'field.cursor')
      const page = await admin.audit({
        userId: user,
        kind,
        since: from,
        after: position,
        limit: limit === undefined ? AUDIT_PAGE.default : Number(limit),
      })
      return success({ events: page.events.map(eventData), next: page.next })
    },
  )
}

/** Epoch milliseconds written as digits (at most 16: the year 2286 is 11); null for any other text. */
function epochMs(value: string): number | null {
  return /^\d{1,16}$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : null
}
