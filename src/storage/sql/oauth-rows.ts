import type { ProviderLink } from '../stores.js'

/** The columns of an `oauth_accounts` row, in the order of every SELECT and of providerLinkValues (migration 0006). */
export const PROVIDER_LINK_COLUMNS = 'provider, subject, user_id, email, created_at'

/** The values of the link's row, in PROVIDER_LINK_COLUMNS order. */
export function providerLinkValues(link: ProviderLink): unknown[] {
  return [link.provider, link.subject, link.userId, link.email, link.createdAt]
}

/** A row of PROVIDER_LINK_COLUMNS as a driver returns it: PostgreSQL returns a BIGINT as a string. */
export function toProviderLink(row: Record<string, unknown>): ProviderLink {
  return {
    provider: String(row.provider),
    subject: String(row.subject),
    userId: String(row.user_id),
    email: row.email === null ? null : String(row.email),
    createdAt: Number(row.created_at),
  }
}

/** The columns of an `oauth_tickets` row (migration 0006). */
export const TICKET_COLUMNS = 'digest, kind, payload, expires_at'
