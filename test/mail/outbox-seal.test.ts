import { describe, expect, it } from 'vitest'
import type { MailIntent } from '../../src/mail/mail-intent.js'
import { createOutboxSeal, MAX_PAYLOAD_LENGTH, type SealedMail } from '../../src/mail/outbox-seal.js'

const SECRET = 'outbox-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const OLD_SECRET = 'old-outbox-secret-0123456789-abcdefghijklmnopqrstu'
const ID = 'a'.repeat(32)
const CODE: MailIntent = { kind: 'code', purpose: 'login', code: '493817', expiresAt: 1_800_000_000_000 }

describe('the outbox seal', () => {
  it('opens what it sealed, for the same row', () => {
    const seal = createOutboxSeal({ secret: SECRET, previousSecrets: [] })
    const notice: MailIntent = {
      kind: 'notice',
      notice: 'email_changed',
      values: { new_email: 'new@example.com' },
    }
    for (const intent of [CODE, notice, { kind: 'test' } as const]) {
      const payload = seal.seal(ID, { to: 'a@example.com', intent })
      expect(seal.open(ID, payload)).toEqual({ to: 'a@example.com', intent })
    }
  })

  it('keeps the language of the message (docs/api.md R1.18), and opens a payload sealed without one', () => {
    const seal = createOutboxSeal({ secret: SECRET, previousSecrets: [] })
    const chinese = seal.seal(ID, { to: 'a@example.com', intent: CODE, language: 'zh-CN' })
    expect(seal.open(ID, chinese)).toEqual({ to: 'a@example.com', intent: CODE, language: 'zh-CN' })
    // what a version that kept no language sealed: the default language, at delivery
    const before = seal.seal(ID, { to: 'a@example.com', intent: CODE })
    expect(seal.open(ID, before)).toEqual({ to: 'a@example.com', intent: CODE })
    // a language that is no tag is a content this version does not know
    const odd = { to: 'a@example.com', intent: CODE, language: 7 } as unknown as SealedMail
    expect(seal.open(ID, seal.seal(ID, odd))).toBeNull()
  })

  it('is ASCII, does not show the code or the address, and differs each time', () => {
    const seal = createOutboxSeal({ secret: SECRET, previousSecrets: [] })
    const first = seal.seal(ID, { to: 'a@example.com', intent: CODE })
    const second = seal.seal(ID, { to: 'a@example.com', intent: CODE })
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]+$/)
    expect(first).not.toContain('493817')
    expect(Buffer.from(first.slice(3), 'base64url').toString('latin1')).not.toContain('493817')
    expect(first).not.toContain('example')
    expect(second).not.toBe(first)
  })

  it('refuses a payload altered anywhere, one copied into another row, and what is no payload', () => {
    const seal = createOutboxSeal({ secret: SECRET, previousSecrets: [] })
    const payload = seal.seal(ID, { to: 'a@example.com', intent: CODE })
    const body = Buffer.from(payload.slice(3), 'base64url')
    for (const index of [0, 11, 12, 20, body.length - 17, body.length - 1]) {
      const altered = Buffer.from(body)
      altered[index] = (altered[index] as number) ^ 1
      expect(seal.open(ID, `v1.${altered.toString('base64url')}`), `byte ${index}`).toBeNull()
    }
    expect(seal.open('b'.repeat(32), payload)).toBeNull()
    expect(seal.open(ID, payload.slice(0, -4))).toBeNull()
    expect(seal.open(ID, `v2.${payload.slice(3)}`)).toBeNull()
    expect(seal.open(ID, '')).toBeNull()
    expect(seal.open(ID, 'v1.')).toBeNull()
    expect(seal.open(ID, '{"to":"a@example.com"}')).toBeNull()
  })

  it('opens what a previous secret sealed (AUTH_JWT_PREVIOUS_SECRETS), and not without it', () => {
    const before = createOutboxSeal({ secret: OLD_SECRET, previousSecrets: [] })
    const payload = before.seal(ID, { to: 'a@example.com', intent: CODE })
    const rotated = createOutboxSeal({ secret: SECRET, previousSecrets: [OLD_SECRET] })
    expect(rotated.open(ID, payload)).toEqual({ to: 'a@example.com', intent: CODE })
    expect(createOutboxSeal({ secret: SECRET, previousSecrets: [] }).open(ID, payload)).toBeNull()
    // what the rotated service seals, the old secret does not open: it seals with the new one
    expect(before.open(ID, rotated.seal(ID, { to: 'a@example.com', intent: CODE }))).toBeNull()
  })

  it('keeps a payload of the largest message well within the 8 KiB of the outbox, and refuses a larger one', () => {
    const seal = createOutboxSeal({ secret: SECRET, previousSecrets: [] })
    const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`
    const intent: MailIntent = { kind: 'notice', notice: 'email_changed', values: { new_email: longest } }
    expect(seal.seal(ID, { to: longest, intent }).length).toBeLessThan(MAX_PAYLOAD_LENGTH / 4)
    const huge: MailIntent = {
      kind: 'notice',
      notice: 'email_changed',
      values: { new_email: 'x'.repeat(7000) },
    }
    expect(() => seal.seal(ID, { to: 'a@example.com', intent: huge })).toThrow(RangeError)
  })

  it('refuses an authentic payload whose content this version does not know', async () => {
    const seal = createOutboxSeal({ secret: SECRET, previousSecrets: [] })
    const unknown = { kind: 'code', purpose: 'wire_money', code: '1', expiresAt: 1 } as unknown as MailIntent
    expect(seal.open(ID, seal.seal(ID, { to: 'a@example.com', intent: unknown }))).toBeNull()
  })
})
