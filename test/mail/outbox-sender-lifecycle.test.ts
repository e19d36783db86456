import { once } from 'node:events'
import { readdir, readFile } from 'node:fs/promises'
import { createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MailUnavailableError, StorageError } from '../../src/errors.js'
import type { MailIntent } from '../../src/mail/mail-intent.js'
import { HARNESS_SECRET, type MailHarness, openMailHarness, START } from './mail-harness.js'

const loginCode = (digits: string): MailIntent => ({
  kind: 'code',
  purpose: 'login',
  code: digits,
  expiresAt: START + 600_000,
})

describe('the outbox sender, around its deliveries', () => {
  let harness: MailHarness | null = null
  const open = async (...options: Parameters<typeof openMailHarness>) => {
    harness = await openMailHarness(...options)
    return harness
  }
  afterEach(async () => {
    await harness?.close()
    harness = null
  })

  it('lives through a store that fails, says so once, and delivers when it answers again', async () => {
    let failing = true
    const h = await open({
      wrapStores: (stores) => ({
        ...stores,
        outbox: {
          ...stores.outbox,
          claim: async (...args) => {
            if (failing) throw new StorageError('outbox.claim failed', { cause: new Error('SQLITE_BUSY') })
            return stores.outbox.claim(...args)
          },
        },
      }),
    })
    await h.mail.mailer.queue('owner@example.com', { kind: 'test' }, null)
    for (let pass = 0; pass < 5; pass++) await h.mail.sender.deliverDue()
    const failures = () =>
      h.logs().filter((line) => line.msg?.toString().startsWith('the outbox store failed'))
    expect(failures()).toEqual([
      expect.objectContaining({ level: 50, operation: 'outbox.claim', failures: 1 }),
    ])
    h.clock.advance(60_000)
    await h.mail.sender.deliverDue()
    expect(failures()).toHaveLength(2)
    expect(failures()[1]).toMatchObject({ failures: 6 })
    failing = false
    await h.mail.sender.deliverDue()
    expect((await h.smtp.next()).subject).toBe('Acme test message')
    expect(h.logs().find((line) => line.msg === 'the outbox store answers again')).toMatchObject({
      operation: 'outbox.claim',
      failedForMs: 60_000,
    })
  })

  it('gives back, uncounted, a code whose account it could not look up', async () => {
    let failing = true
    const h = await open({
      wrapStores: (stores) => ({
        ...stores,
        users: {
          ...stores.users,
          findByEmail: async (email) => {
            if (failing) throw new StorageError('users.findByEmail failed')
            return stores.users.findByEmail(email)
          },
        },
      }),
    })
    await h.addUser('owner@example.com')
    await h.mail.mailer.queue('owner@example.com', loginCode('271828'), null)
    await h.mail.sender.deliverDue()
    expect(await h.peek()).toEqual([expect.objectContaining({ attempts: 0 })])
    expect(h.counts).toMatchObject({ failed: 0, skipped: 0, sent: 0 })
    failing = false
    await h.mail.sender.deliverDue()
    expect((await h.smtp.next()).text).toContain('271828')
  })

  it('close() abandons a send the server does not answer, keeps the message, and stops polling', async () => {
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
    })
    silent.listen(0, '127.0.0.1')
    await once(silent, 'listening')
    try {
      const port = (silent.address() as { port: number }).port
      const h = await open({
        env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_SEND_TIMEOUT_SECONDS: '60' },
        senderSettings: { closeGraceMs: 200, pollIntervalMs: 20 },
      })
      h.mail.sender.start()
      await h.mail.mailer.queue('owner@example.com', { kind: 'test' }, null)
      await vi.waitFor(() => expect(sockets.size).toBe(1))
      const started = performance.now()
      await h.mail.sender.close()
      expect(performance.now() - started).toBeLessThan(2_000)
      // the abandoned attempt counts as failed: the message waits for another process, or the next start
      expect(await h.peek()).toEqual([expect.objectContaining({ attempts: 1 })])
      h.clock.advance(3_600_000)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(await h.peek()).toEqual([expect.objectContaining({ attempts: 1 })])
      expect(sockets.size).toBe(1)
    } finally {
      for (const socket of sockets) socket.destroy()
      silent.close()
    }
  })

  it('writes .eml files to DATA_DIR/outbox/ without SMTP_URL, naming each in a log line without the code', async () => {
    const h = await open({ env: { SMTP_URL: '' } })
    expect(h.mail.transport).toBe(
      `${join(h.config.storage.dataDir, 'outbox')} (development outbox: .eml files)`,
    )
    await h.addUser('owner@example.com')
    await h.mail.mailer.queue('owner@example.com', loginCode('161803'), null)
    await h.mail.sender.deliverDue()
    const [file] = await readdir(join(h.config.storage.dataDir, 'outbox'))
    const path = join(h.config.storage.dataDir, 'outbox', file as string)
    expect(await readFile(path, 'utf8')).toContain('161803')
    const line = h.logs().find((entry) => entry.file === path)
    expect(line).toMatchObject({ level: 30, msg: `mail written to ${path}` })
    for (const entry of h.logLines) expect(entry).not.toContain('161803')
    expect(h.smtp.messages).toEqual([])
  })

  it('in production without SMTP_URL sends nothing, refuses to queue, and says so at start', async () => {
    const h = await open({ env: { SMTP_URL: '', NODE_ENV: 'production', AUTH_JWT_SECRET: HARNESS_SECRET } })
    expect(h.mail.mailer.available).toBe(false)
    expect(h.mail.transport).toBeNull()
    await expect(h.mail.mailer.queue('owner@example.com', { kind: 'test' }, null)).rejects.toThrow(
      MailUnavailableError,
    )
    expect(h.logs()).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: expect.stringMatching(/^no mail can be sent \(production without SMTP_URL\)/),
      }),
    )
    expect(await h.peek()).toEqual([])
  })
})
