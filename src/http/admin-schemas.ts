import { type Static, Type } from 'typebox'
import {
  AdminSelfError,
  ForbiddenError,
  LastAdminError,
  SecondFactorRequiredError,
  UserNotFoundError,
} from '../errors.js'
import { type Message, message } from '../language/message.js'
import { ROLE_NAME } from '../role-name.js'
import { answer, failed, httpsRequired, LIMITED, NO_STORE, refusal, unauthorized } from './response-parts.js'
import { badBody, invalid, limitedJsonRefusals, mayHaveChanged, withExamples } from './responses.js'
import { AccountData, Envelope, FactorId, Instant, Nullable, UserId } from './schemas.js'

// The requests and answers of the admin API (docs/api.md §4.27), made of the parts in response-parts.ts.

/** The most accounts (GET /admin/users) and events (GET /admin/audit) one page holds, and how many by default. */
export const USERS_PAGE = { default: 50, max: 100 } as const
export const AUDIT_PAGE = { default: 50, max: 200 } as const

const USERS_LIMIT_PATTERN = '^(?:[1-9][0-9]?|100)$'
const AUDIT_LIMIT_PATTERN = '^(?:[1-9][0-9]?|1[0-9]{2}|200)$'
const USER_ID_PATTERN = '^[1-9][0-9]{9}$'
const KIND_PATTERN = '^[a-z_]{1,32}$'

/** The texts of the admin API's patterns (http/validation.ts): words, where the others quote the pattern. */
export const ADMIN_PATTERN_PROBLEMS: ReadonlyMap<string, Message> = new Map([
  [USERS_LIMIT_PATTERN, message('field.limit', { max: USERS_PAGE.max })],
  [AUDIT_LIMIT_PATTERN, message('field.limit', { max: AUDIT_PAGE.max })],
  [USER_ID_PATTERN, message('field.user_id')],
  [KIND_PATTERN, message('field.kind')],
  [ROLE_NAME.source, message('field.role')],
])

const Cursor = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }))

export const AdminUsersQuery = Type.Object({
  query: Type.Optional(
    Type.String({
      maxLength: 254,
      description:
        'A prefix of the e-mail address or of the username, in any case; empty or absent: every account',
      examples: ['ada'],
    }),
  ),
  limit: Type.Optional(
    Type.String({ pattern: USERS_LIMIT_PATTERN, description: 'Accounts per page: 1 to 100; 50 by default' }),
  ),
  after: Cursor('The `next` of the page before (an opaque cursor); absent: the first page'),
})
export type AdminUsersQuery = Static<typeof AdminUsersQuery>

export const AdminUserParams = Type.Object({
  id: Type.String({
    description: "The account's id (10 digits); any other text is a 404",
    examples: ['4821039576'],
  }),
})

export const AdminUserBody = Type.Object(
  {
    role: Type.Optional(
      Type.String({
        pattern: ROLE_NAME.source,
        description: '`user`, or 1 to 32 of a-z 0-9 _ - starting with a letter (ADMIN_ROLE makes an admin)',
        examples: ['tessera-admin'],
      }),
    ),
    status: Type.Optional(
      Type.Unsafe<'active' | 'disabled'>({
        type: 'string',
        enum: ['active', 'disabled'],
        description: 'disabled: the account can no longer log in or refresh, and its sessions are ended',
      }),
    ),
  },
  { description: 'At least one of `role` and `status`; the role is changed first' },
)
export type AdminUserBody = Static<typeof AdminUserBody>

export const AdminAuditQuery = Type.Object({
  user: Type.Optional(
    Type.String({
      pattern: USER_ID_PATTERN,
      description: 'Only the events of this user id (a deleted one too)',
    }),
  ),
  kind: Type.Optional(
    Type.String({
      pattern: KIND_PATTERN,
      description: 'Only the events of this kind',
      examples: ['login_failed'],
    }),
  ),
  since: Type.Optional(
    Type.String({
      maxLength: 40,
      description:
        'Only the events from then on: an ISO 8601 date or time (UTC unless it names an offset), or epoch milliseconds',
      examples: ['2026-11-01T08:00Z'],
    }),
  ),
  limit: Type.Optional(
    Type.String({ pattern: AUDIT_LIMIT_PATTERN, description: 'Events per page: 1 to 200; 50 by default' }),
  ),
  after: Cursor('The `next` of the page before (an opaque cursor); absent: the newest events'),
})
export type AdminAuditQuery = Static<typeof AdminAuditQuery>

const NextCursor = Nullable(
  Type.String(),
  'Where the next page starts: its `after`; null when this page holds the last match',
)

/** One event of the audit trail (docs/api.md §6.3). */
const AuditEventItem = Type.Object({
  id: Type.String({ pattern: '^[0-9]+$', description: "The event's id, higher for a later one" }),
  kind: Type.String({ description: 'The event (docs/api.md §6.3)', examples: ['login_succeeded'] }),
  user_id: Nullable(UserId, 'The account it is about; null when none is known'),
  at: Instant('When it happened, ISO 8601 UTC with milliseconds'),
  ip: Nullable(
    Type.String(),
    'The client address of the request; null off HTTP or once the account was deleted',
  ),
  reason: Nullable(Type.String(), 'Why or how (docs/api.md §6.3); `admin` for an admin’s act'),
  actor: Nullable(UserId, 'For an admin’s act: the admin who acted; null otherwise'),
  request_id: Nullable(Type.String(), 'The request id of the HTTP request (its log line’s reqId)'),
  omitted: Nullable(Type.Integer(), 'events_omitted only: how many events were left out'),
})

/** A session of the account, as GET /auth/sessions shows one, with its expiry and its second factor. */
const AdminSessionItem = Type.Object({
  id: Type.String({ pattern: '^[0-9a-f]{32}$', description: 'The session id' }),
  created_at: Instant('When the session started'),
  last_used_at: Instant('Its start or latest refresh'),
  expires_at: Instant('When its refresh token expires'),
  device: Type.String({ maxLength: 64, description: 'From the User-Agent it started with; empty when none' }),
  client_address: Nullable(Type.String(), 'The network it was last used from (IPv4 /24, IPv6 /48)'),
  second_factor: Type.Boolean({ description: 'Whether it was established with a second factor' }),
})

const AdminFactorItem = Type.Object({
  id: FactorId,
  type: Type.Unsafe<'totp' | 'passkey'>({ type: 'string', enum: ['totp', 'passkey'] }),
  name: Type.String({ description: '`Authenticator app`, or the name a passkey was given' }),
  created_at: Instant('When it was added'),
})

const SessionsEnded = Type.Integer({ minimum: 0, description: 'How many sessions of the account were ended' })

export const AdminUsersResponse = Envelope(Type.Object({ users: Type.Array(AccountData), next: NextCursor }))
export const AdminUserResponse = Envelope(
  Type.Object({
    user: AccountData,
    sessions: Type.Array(AdminSessionItem, { description: 'Its sessions, most recently used first' }),
    factors: Type.Array(AdminFactorItem, { description: 'Its confirmed second factors, oldest first' }),
    events: Type.Array(AuditEventItem, { description: 'Its 20 latest audit events, newest first' }),
  }),
)
export const AdminUpdateResponse = Envelope(
  Type.Object({
    user: AccountData,
    changed: Type.Boolean({ description: 'False when the account already had that role and status' }),
    sessions_ended: SessionsEnded,
  }),
)
export const AdminRevokeResponse = Envelope(Type.Object({ sessions_ended: SessionsEnded }))
export const AdminMfaResetResponse = Envelope(
  Type.Object({
    factors_removed: Type.Integer({ minimum: 0, description: 'How many second factors were removed' }),
    sessions_ended: SessionsEnded,
  }),
)
export const AdminAuditResponse = Envelope(
  Type.Object({ events: Type.Array(AuditEventItem, { description: 'Newest first' }), next: NextCursor }),
)

/** The 403s of every admin endpoint: not an admin, no second factor, or HTTPS. */
const adminForbidden = () =>
  withExamples(
    refusal(
      "The account's stored role is not ADMIN_ROLE (R4.27.2), or with ADMIN_REQUIRE_MFA it has no second factor or the session was not established with one (R4.27.3)",
      [new ForbiddenError(), new SecondFactorRequiredError()],
      NO_STORE,
    ),
    httpsRequired(),
  )
const notFound = (headers = NO_STORE) =>
  refusal('No account has this id (any more)', [new UserNotFoundError()], headers)
const conflict = () =>
  refusal(
    'An admin asked to demote, disable or delete their own account (R4.27.6), or the last active admin (R4.27.7); nothing was changed',
    [new AdminSelfError(), new LastAdminError()],
    LIMITED,
  )
const badQuery = (errors: ReturnType<typeof invalid>[]) =>
  refusal('A query parameter is not valid: `data.errors` names it (R4.27.1)', errors, NO_STORE)
/** Every admin answer is read by the admin's key (the guard), never by a cache. */
const reads = {
  401: unauthorized(),
  403: adminForbidden(),
  500: failed(NO_STORE),
}
const PER_ADDRESS =
  'More than RATE_LIMIT_PER_MINUTE admin changes from this client address in a minute (R8.1)'
const writes = () => ({
  ...limitedJsonRefusals(PER_ADDRESS),
  401: unauthorized(),
  403: adminForbidden(),
  404: notFound(LIMITED),
  503: mayHaveChanged(false),
})

/** GET /admin/users. */
export const adminUsersResponses = () => ({
  ...reads,
  200: answer(AdminUsersResponse, 'A page of accounts in id order', NO_STORE),
  400: badQuery([
    invalid('/limit', message('field.limit', { max: USERS_PAGE.max })),
    invalid('/after', message('field.cursor')),
  ]),
})

/** GET /admin/users/{id}. */
export const adminUserResponses = () => ({
  ...reads,
  200: answer(AdminUserResponse, 'The account, its sessions and factors, and its latest events', NO_STORE),
  404: notFound(),
})

/** PUT /admin/users/{id}. */
export const adminUpdateResponses = () => ({
  ...writes(),
  200: answer(AdminUpdateResponse, 'The account as it is now: changed, or already so', LIMITED),
  400: badBody(
    [
      invalid('', message('field.role_or_status')),
      invalid('/role', message('field.role')),
      invalid('/status', message('field.enum')),
    ],
    LIMITED,
  ),
  409: conflict(),
})

/** POST /admin/users/{id}/revoke. */
export const adminRevokeResponses = () => ({
  ...writes(),
  200: answer(AdminRevokeResponse, 'Every session of the account is ended', LIMITED),
})

/** POST /admin/users/{id}/mfa-reset. */
export const adminMfaResetResponses = () => ({
  ...writes(),
  200: answer(
    AdminMfaResetResponse,
    'Every second factor and recovery code of the account is removed, and its sessions ended',
    LIMITED,
  ),
})

/** DELETE /admin/users/{id}. */
export const adminDeleteResponses = () => ({
  ...writes(),
  204: {
    type: 'null',
    description:
      'The account is deleted, with its sessions; its audit events are kept, their addresses erased',
    headers: LIMITED,
  },
  409: conflict(),
})

/** GET /admin/audit. */
export const adminAuditResponses = () => ({
  ...reads,
  200: answer(AdminAuditResponse, 'A page of the audit trail, newest first', NO_STORE),
  400: badQuery([
    invalid('/user', message('field.user_id')),
    invalid('/since', message('field.since')),
    invalid('/after', message('field.cursor')),
  ]),
})
