import { createHmac, hkdfSync, randomBytes } from 'node:crypto'
import type { Clock } from '../clock.js'
import { openText, sealText } from '../sealed-text.js'
import type { TicketKind, TicketStore } from '../storage/stores.js'

/**
 * One-time tickets of the shared TicketStore, of any kind: a provider sign-in's state and exchange code
 * (providers/sign-in-state.ts), a second-factor challenge and a passkey ceremony (mfa/). A ticket is a random secret
 * handed to the client; the store keeps only its keyed digest and its payload sealed under a key derived from the
 * secret itself (DECISIONS "Secrets never leave the service readable"): whoever reads the table (a backup, a
 * replica) can neither find a ticket's secret nor read its payload, and whoever can write it cannot make a ticket
 * the service opens. TicketStore.take uses a ticket up in one statement: of concurrent takes of one ticket, from any
 * number of instances, one gets it.
 */
export interface OneTimeTickets {
  /**
   * Stores `payload` (JSON) under a new secret, good until `expiresAt` (epoch ms); resolves with the secret. With
   * `secret` (one this module made), stores it under that one again: a ticket taken and put back (a challenge's
   * tries), which no concurrent take can have had meanwhile.
   */
  put(kind: TicketKind, payload: object, expiresAt: number, secret?: string): Promise<string>
  /** Uses up the ticket: its payload, or null when there is none (unknown, used, expired, not a secret). */
  take(kind: TicketKind, secret: string): Promise<Record<string, unknown> | null>
}

export interface OneTimeTicketsDeps {
  tickets: TicketStore
  /** AUTH_JWT_SECRET, from which the key of the tickets' digests is derived. */
  secret: string
  clock: Clock
}

const DIGEST_INFO = 'tessera oauth tickets v1'
const SEAL_INFO = 'tessera oauth ticket seal v1'
/** A ticket's secret: 256 random bits as base64url, 43 characters. */
export const TICKET_SECRET = /^[A-Za-z0-9_-]{43}$/

export function createOneTimeTickets(deps: OneTimeTicketsDeps): OneTimeTickets {
  const { tickets, clock } = deps
  const digestKey = Buffer.from(hkdfSync('sha256', deps.secret, '', DIGEST_INFO, 32))
  const digest = (kind: TicketKind, secret: string) =>
    createHmac('sha256', digestKey).update(`${kind}:${secret}`).digest('hex')

  return {
    async put(kind, payload, expiresAt, secret = randomSecret()) {
      await tickets.put({
        digest: digest(kind, secret),
        kind,
        payload: sealText(sealKey(kind, secret), kind, JSON.stringify(payload)),
        expiresAt,
      })
      return secret
    },
    async take(kind, secret) {
      // a value no ticket could have is not looked up
      if (!TICKET_SECRET.test(secret)) return null
      const payload = await tickets.take(digest(kind, secret), kind, clock.now())
      if (payload === null) return null
      const text = openText(sealKey(kind, secret), kind, payload)
      if (text === null) return null
      try {
        const value: unknown = JSON.parse(text)
        return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null
      } catch {
        return null
      }
    },
  }
}

/** 256 random bits as base64url (43 characters): a ticket's secret, a nonce, a PKCE verifier. */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url')
}

/** The key a ticket's payload is sealed with: derived from its own secret, which the store never holds. */
function sealKey(kind: TicketKind, secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, kind, SEAL_INFO, 32))
}
