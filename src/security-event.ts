import type { Clock } from './clock.js'
import type { CodePurpose } from './code-purpose.js'

/**
 * The security events of an account (issue 13, docs/api.md "Audit events"): what the audit trail records, in the
 * `audit_events` table of the SQL store and in the log. An event never carries a password, a token, a password hash
 * or an e-mail address: the user is named by id only.
 */
export type SecurityEventType =
  | 'registered'
  | 'login_succeeded'
  | 'login_failed'
  | 'refresh_succeeded'
  | 'refresh_refused'
  | 'logout'
  | 'password_reset'
  | 'account_deleted'
  | 'sessions_revoked'
  /** A user ended one of their sessions by its id (DELETE /auth/sessions/<id>). */
  | 'session_ended'
  /**
   * A rotated refresh token came back after the reuse grace while AUTH_REFRESH_REUSE_ENDS_SESSION is on: its session
   * was ended, the current token of the chain with it (docs/api.md §3, RFC 9700 §4.14.2).
   */
  | 'refresh_reuse_detected'
  /** A one-time code was queued for mailing (docs/api.md §4.14); its reason is the code's purpose. */
  | 'code_sent'
  /** A try at a one-time code was refused (wrong, expired, used, out of tries); its reason is the purpose tried. */
  | 'code_refused'
  /**
   * The account's address was proved (a code sent there was used). Reason `claimed` when it was proved by someone
   * not signed in to the unverified account: its sessions and earlier password ended (docs/api.md §4.15).
   */
  | 'email_verified'
  /** The owner changed the password (POST /auth/password/change); the other sessions ended. */
  | 'password_changed'
  /** The owner changed the account's address (POST /auth/email/change). */
  | 'email_changed'
  /** The owner changed the profile (PUT /auth/profile). */
  | 'profile_updated'
  /** An operator gave the account another role (`tessera users set-role`); its sessions ended. */
  | 'role_changed'
  /** An operator disabled the account (`tessera users disable`); its sessions ended. */
  | 'account_disabled'
  /** An operator enabled the account again (`tessera users enable`). */
  | 'account_enabled'
  /** The owner uploaded an avatar (POST /auth/avatar), replacing any previous one (docs/api.md §4.23). */
  | 'avatar_changed'
  /** The owner removed the avatar (DELETE /auth/avatar) that the account had. */
  | 'avatar_removed'
  /**
   * A provider account was linked to an account that has the address the provider vouches for (docs/api.md §4.24);
   * a link made with a new account is `registered` with reason `provider`.
   */
  | 'provider_linked'
  /** The owner unlinked a provider (DELETE /auth/oauth/<provider>). */
  | 'provider_unlinked'
  /** A second factor was confirmed (docs/api.md §4.25): its reason is `totp`; the account's other sessions ended. */
  | 'mfa_enabled'
  /**
   * A TOTP factor was removed (reason `totp`), or every factor of the account: by an operator (`tessera users
   * mfa-reset`, reason `operator`) or by the proof of an impostor's address (reason `claimed`).
   */
  | 'mfa_disabled'
  /**
   * A second step was refused (POST /auth/mfa/verify, a passkey for a challenge): reason `totp`, `recovery_code` or
   * `passkey` for a wrong proof, `ticket` for a ticket unknown, used, expired or out of tries, `disabled`.
   */
  | 'mfa_challenge_failed'
  /** A recovery code was used up to complete a second step. */
  | 'recovery_code_used'
  /** A passkey was registered (POST /auth/passkeys/register/verify); the account's other sessions ended. */
  | 'passkey_added'
  /** A passkey was removed (DELETE /auth/mfa/factors/<id>). */
  | 'passkey_removed'
  /** A passkey's signature counter went backwards (a cloned authenticator?): the assertion was refused. */
  | 'passkey_counter_regressed'
  /** A notice mail was queued (docs/api.md §6.4); codes are `code_sent`. */
  | 'mail_queued'
  /** A queued mail was accepted by the mail server (or written to the development outbox); reason as queued. */
  | 'mail_sent'
  /** A delivery attempt failed; it is tried again later. */
  | 'mail_failed'
  /** A mail that failed for a day (or could no longer be read) was given up. */
  | 'mail_dropped'
  /**
   * A webhook receiver answered 410 Gone: its URL is disabled until `tessera webhooks enable` (docs/api.md §6.5); the
   * reason names the URL by its position in WEBHOOK_URLS (`url_1`), never the URL.
   */
  | 'webhook_disabled'
  /**
   * An event was given up for one URL: failing for WEBHOOK_GIVE_UP_HOURS; the user is the account it was about, the
   * reason names the URL by its position (`url_1`).
   */
  | 'webhook_dropped'
  /**
   * Not an event of an account: how many events of one kind a client can cause at will (its reason) the flood bound
   * left out of the trail in one minute (docs/api.md R6.3.4); the count is `omitted`.
   */
  | 'events_omitted'

/** Why a login failed or a refresh was refused; null for the other events. */
export type SecurityEventReason =
  /** login_failed: no account has that e-mail */
  | 'unknown_email'
  /** login_failed: the password did not verify */
  | 'wrong_password'
  /** login_failed and the other ways of logging in: the account is disabled (the answer is a wrong password's) */
  | 'disabled'
  /** login_failed: the throttle refused the attempt before any password check (docs/api.md R8.4, R8.5) */
  | 'throttled'
  /**
   * refresh_refused: a well-signed refresh token that is no longer the stored one (used, replaced or logged out),
   * the first time it comes back
   */
  | 'reused'
  /** refresh_refused: such a token again, after its reuse was recorded (a replay: only the first names the reuse) */
  | 'replayed'
  /** refresh_refused: a token that does not verify (bad signature, expired, malformed, wrong type) */
  | 'invalid'
  /** password_reset, account_deleted, sessions_revoked: done by an operator's `tessera users` command */
  | 'operator'
  /** sessions_revoked, role_changed, account_disabled, …: done by an admin through the admin API (its `actor`) */
  | 'admin'
  /** refresh_succeeded: a rotated token presented again inside AUTH_REFRESH_REUSE_GRACE_SECONDS got its successor */
  | 'grace'
  /** logout: with `?scope=others`, the caller's other sessions were ended, not this one */
  | 'others'
  /** logout: with `?scope=all`, every session of the caller was ended */
  | 'all'
  /** login_succeeded: signed in with a code mailed to the address (POST /auth/login/email-code) */
  | 'email_code'
  /**
   * login_succeeded: signed in with a provider (docs/api.md §4.24); registered: the account was made by that sign-in
   */
  | 'provider'
  /**
   * login_failed: a provider sign-in whose address an account has, which the provider does not vouch for: no link is
   * made (docs/api.md §4.24)
   */
  | 'unverified_email'
  /** login_succeeded: completed with a second factor (POST /auth/mfa/verify, or a passkey for a challenge) */
  | 'mfa'
  /**
   * login_succeeded: signed in with a passkey alone (docs/api.md §4.26); login_failed: a passkey refused for such a
   * sign-in; mfa_*: about a passkey
   */
  | 'passkey'
  /** mfa_enabled, mfa_disabled, mfa_challenge_failed: about an authenticator app's codes */
  | 'totp'
  /** mfa_challenge_failed: a wrong recovery code */
  | 'recovery_code'
  /** mfa_challenge_failed: the ticket is unknown, used, expired or out of tries */
  | 'ticket'
  /** email_verified: proved by someone not signed in to the unverified account, whose sessions and password ended */
  | 'claimed'
  /**
   * code_sent, code_refused, mail_*: the code's purpose. The public ones (`register`, `login`, `reset_password`)
   * name no account and are a kind a client can cause at will (R6.3.4).
   */
  | CodePurpose
  /** webhook_disabled, webhook_dropped: the URL at this position of WEBHOOK_URLS (from 1) */
  | `url_${number}`

export interface SecurityEvent {
  /** When it happened: epoch milliseconds of the service clock. */
  at: number
  type: SecurityEventType
  /** The account's id when it is known (not for a login with an unknown e-mail or an unverifiable token). */
  userId: string | null
  /** The client address the request came from (docs/api.md: the socket's peer or TRUST_PROXY's); null off HTTP. */
  clientAddress: string | null
  /** The request id of the HTTP request (Fastify's request.id); null off HTTP. */
  requestId: string | null
  reason: SecurityEventReason | null
  /** events_omitted only: how many events of the kind its reason names were left out; absent on every other event. */
  omitted?: number
  /**
   * An admin's act (reason `admin`, docs/api.md §4.27): the id of the admin who acted, `userId` being the account
   * acted on. Absent (null in the trail) on every other event.
   */
  actor?: string
}

/** Where the service hands its security events. Never throws and never makes the caller wait. */
export interface SecurityEventSink {
  record(event: SecurityEvent): void
}

/**
 * Whom a call of the account service is for: the one carrier of the client address into the account layer. The
 * service reads the address from here alone, for the login throttle (docs/api.md R8.4 to R8.6), the Argon2 queue's
 * share of each requester (R8.2) and its security events; the request id names the request in the events and the
 * log. The routes build one per HTTP request, with both; a call off HTTP (an operator's code, a test) gives null for
 * what it does not have.
 */
export interface RequestContext {
  /** The client address (docs/api.md R8.3: the socket's peer or TRUST_PROXY's); null off HTTP. */
  clientAddress: string | null
  /** The request id of the HTTP request (Fastify's request.id); null off HTTP. */
  requestId: string | null
  /** The User-Agent header, which names the device of a session that starts (docs/api.md §4.11); absent off HTTP. */
  userAgent?: string | null
  /**
   * The language of the request's answers (its Accept-Language, docs/api.md §1.5), which a mail it causes is written
   * in; absent off HTTP (the default language).
   */
  language?: string
}

/** The context of what no client asked for (the outbox sender, an operator's call): no address, no request. */
export const OFF_HTTP: RequestContext = Object.freeze({ clientAddress: null, requestId: null })

/** Records one event of `type` for the call `context` stands for, at `clock`'s time. */
export type RecordSecurityEvent = (
  type: SecurityEventType,
  userId: string | null,
  context: RequestContext,
  reason?: SecurityEventReason | null,
) => void

/** How the account service and the sessions record their events in `sink`: the context names address and request. */
export function securityEventRecorder(sink: SecurityEventSink, clock: Clock): RecordSecurityEvent {
  return (type, userId, context, reason = null) =>
    sink.record({
      at: clock.now(),
      type,
      userId,
      clientAddress: context.clientAddress,
      requestId: context.requestId,
      reason,
    })
}
