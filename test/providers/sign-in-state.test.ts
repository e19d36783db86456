import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import {
  type ApplicationReturn,
  createSignInTickets,
  type ExchangeGrant,
  type SignInTickets,
} from '../../src/providers/sign-in-state.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores, TicketKind, TicketStore } from '../../src/storage/stores.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { TEST_SECRET } from '../support/test-service.js'

// docs/api.md §4.24: the state of a sign-in and the exchange codes, as one-time tickets of the SQL database

/** The start of a popup's sign-in: no redirect_to, no challenge. */
const POPUP = { redirectTo: null, exchangeChallenge: null }
/** An application's S256 challenge (RFC 7636 appendix B). */
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

describe.each(backends.filter((backend) => !backend.redis))('sign-in tickets [$name]', (backend) => {
  let instance: BackendInstance
  let stores: Stores
  let tickets: SignInTickets
  /** Every ticket written, as the store received it: what a reader of the table would see. */
  const written: Array<{ digest: string; kind: TicketKind; payload: string }> = []

  beforeAll(async () => {
    instance = await backend.setup()
    stores = await openStores(loadConfig(instance.env).storage, systemClock)
    const observed: TicketStore = {
      ...stores.tickets,
      put: (ticket) => {
        written.push(ticket)
        return stores.tickets.put(ticket)
      },
    }
    tickets = createSignInTickets({ tickets: observed, secret: TEST_SECRET, clock: systemClock })
  })
  afterAll(async () => {
    await stores?.close()
    await instance?.teardown()
  })

  it('stores a sign-in under a keyed digest, its nonce and verifier sealed: the table reveals none of them', async () => {
    const pending = await tickets.begin('google', {
      redirectTo: 'https://app.example.com/back',
      exchangeChallenge: CHALLENGE,
    })
    const row = written.at(-1)
    expect(row?.kind).toBe('oauth_state')
    for (const secret of [pending.state, pending.nonce, pending.codeVerifier, 'app.example.com', CHALLENGE]) {
      expect(row?.digest).not.toContain(secret)
      expect(row?.payload).not.toContain(secret)
    }
    expect(await tickets.finish(pending.state)).toEqual({
      provider: 'google',
      nonce: pending.nonce,
      codeVerifier: pending.codeVerifier,
      redirectTo: 'https://app.example.com/back',
      exchangeChallenge: CHALLENGE,
    })
    expect(await tickets.finish(pending.state)).toBeNull()
  })

  it('gives a state to one of many concurrent callbacks', async () => {
    const { state } = await tickets.begin('github', POPUP)
    const taken = await Promise.all(Array.from({ length: 20 }, () => tickets.finish(state)))
    expect(taken.filter((pending) => pending !== null)).toHaveLength(1)
  })

  it('keeps states and exchange codes apart, and refuses a state that is not one', async () => {
    const { state } = await tickets.begin('google', POPUP)
    expect(await tickets.redeemCode(state)).toBeNull()
    const grant = { userId: '1234567890', provider: 'google', exchangeChallenge: CHALLENGE }
    const code = await tickets.issueCode(grant)
    expect(await tickets.finish(code)).toBeNull()
    expect(await tickets.redeemCode(code)).toEqual(grant)
    expect(await tickets.redeemCode(code)).toBeNull()
    expect(await tickets.finish(`${state}x`)).toBeNull()
    expect(await tickets.finish('')).toBeNull()
    // the refused tries did not use it up
    expect(await tickets.finish(state)).not.toBeNull()
  })

  it('R4.24.11 opens no redirect_to sign-in and no exchange code without its challenge (tickets of an earlier version)', async () => {
    const unbound = { redirectTo: 'https://app.example.com/back', exchangeChallenge: undefined }
    const { state } = await tickets.begin('google', unbound as unknown as ApplicationReturn)
    expect(await tickets.finish(state)).toBeNull()
    const code = await tickets.issueCode({ userId: '1234567890', provider: 'google' } as ExchangeGrant)
    expect(await tickets.redeemCode(code)).toBeNull()
  })

  it('opens nothing a writer of the table made: a payload sealed for another state is refused', async () => {
    const first = await tickets.begin('google', POPUP)
    const firstRow = written.at(-1)
    const second = await tickets.begin('google', POPUP)
    const secondRow = written.at(-1)
    if (firstRow === undefined || secondRow === undefined) throw new Error('no rows')
    // the second state's row, its payload swapped for the first's
    await stores.tickets.take(secondRow.digest, 'oauth_state', Date.now())
    await stores.tickets.put({ ...secondRow, payload: firstRow.payload, expiresAt: Date.now() + 60_000 })
    expect(await tickets.finish(second.state)).toBeNull()
    expect(await tickets.finish(first.state)).not.toBeNull()
  })

  it('refuses an expired ticket', async () => {
    const clock = { now: () => Date.now() - 11 * 60_000 }
    const past = createSignInTickets({ tickets: stores.tickets, secret: TEST_SECRET, clock })
    const { state } = await past.begin('google', POPUP)
    expect(await tickets.finish(state)).toBeNull()
  })
})
