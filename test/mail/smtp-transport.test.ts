import { once } from 'node:events'
import { createServer, type Server, type Socket } from 'node:net'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { MailTransport } from '../../src/mail/mail-transport.js'
import { createSmtpTransport, describeSmtpUrl, smtpConnection } from '../../src/mail/smtp-transport.js'
import { makeCertificate, type TestCertificate } from '../support/certificates.js'
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js'
import { useTempDir } from '../support/temp-dir.js'
import { SAMPLE_MAIL as MAIL } from './mail-harness.js'

describe('the SMTP transport', () => {
  const temp = useTempDir('smtp-transport')
  let certificate: TestCertificate
  const servers: TestSmtpServer[] = []
  const transports: MailTransport[] = []

  const server = async (options?: Parameters<typeof startSmtpServer>[0]) => {
    const started = await startSmtpServer(options)
    servers.push(started)
    return started
  }
  const transport = (url: string, extra: { ca?: Buffer; timeoutSeconds?: number } = {}) => {
    const created = createSmtpTransport({ url, timeoutSeconds: extra.timeoutSeconds ?? 5, ca: extra.ca })
    transports.push(created)
    return created
  }

  beforeAll(async () => {
    certificate = await makeCertificate(temp.path, 'smtp')
  })
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()))
    await Promise.all(servers.splice(0).map((s) => s.stop()))
  })

  it('delivers over plain SMTP on the loopback: both parts, the Message-ID, From and Auto-Submitted', async () => {
    const smtp = await server()
    const result = await transport(smtp.url).send(MAIL)
    expect(result).toEqual({ delivered: true, response: expect.stringMatching(/^250 /), file: null })
    const received = await smtp.next()
    expect(received).toMatchObject({
      to: ['owner@example.com'],
      from: 'no-reply@example.com',
      fromHeader: '"Acme" <no-reply@example.com>',
      subject: MAIL.subject,
      text: MAIL.text,
      html: MAIL.html,
      messageId: MAIL.messageId,
      secure: false,
    })
    expect(received.headers.get('auto-submitted')).toBe('auto-generated')
  })

  it('reuses its connection for the next message, and opens another once the server dropped it', async () => {
    const smtp = await server()
    const pooled = transport(smtp.url)
    for (const n of [1, 2, 3]) expect((await pooled.send({ ...MAIL, subject: `n${n}` })).delivered).toBe(true)
    expect(smtp.connections).toBe(1)
    await smtp.stop()
    await smtp.start()
    expect((await pooled.send({ ...MAIL, subject: 'after' })).delivered).toBe(true)
    expect(smtp.messages.map((mail) => mail.subject)).toEqual(['n1', 'n2', 'n3', 'after'])
    expect(smtp.connections).toBe(2)
  })

  it('upgrades with STARTTLS, trusting the certificate it is given (and not one it is not)', async () => {
    const smtp = await server({ tls: { key: await keyOf(certificate), cert: certificate.cert } })
    expect((await transport(smtp.url, { ca: certificate.cert }).send(MAIL)).delivered).toBe(true)
    expect((await smtp.next()).secure).toBe(true)
    // the system's CAs only, as in production: a self-signed certificate is refused, and the mail kept for later
    const refused = await transport(smtp.url).send(MAIL)
    expect(refused).toMatchObject({ delivered: false, permanent: false })
    expect(smtp.messages).toHaveLength(1)
  })

  it('speaks TLS from the start with smtps://', async () => {
    const smtp = await server({
      tls: { key: await keyOf(certificate), cert: certificate.cert },
      implicitTls: true,
    })
    expect(smtp.url).toMatch(/^smtps:/)
    expect((await transport(smtp.url, { ca: certificate.cert }).send(MAIL)).delivered).toBe(true)
    expect((await smtp.next()).secure).toBe(true)
  })

  it("logs in with the user and password of the URL; a refused login is not the message's fault", async () => {
    const smtp = await server({
      tls: { key: await keyOf(certificate), cert: certificate.cert },
      login: { user: 'mailer@example.com', pass: 'p@ss:word/1' },
    })
    expect(smtp.url).toContain('mailer%40example.com:p%40ss%3Aword%2F1@')
    expect((await transport(smtp.url, { ca: certificate.cert }).send(MAIL)).delivered).toBe(true)
    expect((await smtp.next()).user).toBe('mailer@example.com')
    const wrong = smtp.url.replace('word%2F1', 'wrong')
    const refused = await transport(wrong, { ca: certificate.cert }).send(MAIL)
    expect(refused).toMatchObject({
      delivered: false,
      permanent: false,
      reason: expect.stringMatching(/EAUTH/),
    })
  })

  it('tells a refusal for good (5xx to the recipient or the message) from one that may pass later', async () => {
    const smtp = await server()
    const smtpTransport = transport(smtp.url)
    const outcomes: Array<[Parameters<TestSmtpServer['refuse']>[0], boolean]> = [
      ['temporary', false],
      ['permanent', true],
      [{ code: 554, message: '5.7.1 Message refused', at: 'data' }, true],
      [{ code: 452, message: '4.2.2 Mailbox full', at: 'data' }, false],
      [{ code: 503, message: '5.5.1 Bad sequence', at: 'rcpt' }, false],
    ]
    for (const [refusal, permanent] of outcomes) {
      smtp.refuse(refusal)
      const result = await smtpTransport.send(MAIL)
      expect(result, JSON.stringify(refusal)).toMatchObject({ delivered: false, permanent })
      if (!result.delivered) expect(result.reason).not.toContain('493817')
    }
    smtp.refuse(null)
    expect((await smtpTransport.send(MAIL)).delivered).toBe(true)
    expect(smtp.messages).toHaveLength(1)
  })

  it('fails, to be tried again, when the server is down', async () => {
    const smtp = await server()
    await smtp.stop()
    const result = await transport(smtp.url).send(MAIL)
    expect(result).toMatchObject({
      delivered: false,
      permanent: false,
      reason: expect.stringMatching(/ECONNREFUSED|ESOCKET|ECONNECTION/),
    })
  })

  it('gives up on a server that does not answer after MAIL_SEND_TIMEOUT_SECONDS', async () => {
    const sockets = new Set<Socket>()
    const silent: Server = createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
    })
    silent.listen(0, '127.0.0.1')
    await once(silent, 'listening')
    try {
      const port = (silent.address() as { port: number }).port
      const started = performance.now()
      const result = await transport(`smtp://127.0.0.1:${port}`, { timeoutSeconds: 1 }).send(MAIL)
      expect(result).toMatchObject({ delivered: false, permanent: false })
      // the setting's second, not the library's own 30 s greeting timeout: the bound leaves a loaded machine room
      expect(performance.now() - started).toBeLessThan(20_000)
    } finally {
      for (const socket of sockets) socket.destroy()
      silent.close()
    }
  })

  it('reads SMTP_URL: STARTTLS required except on the machine itself, default ports, credentials decoded', () => {
    expect(smtpConnection('smtp://mail.example.com')).toEqual({
      host: 'mail.example.com',
      port: 587,
      secure: false,
      requireTLS: true,
    })
    expect(smtpConnection('smtps://u%40x.io:p%3Aw@mail.example.com')).toEqual({
      host: 'mail.example.com',
      port: 465,
      secure: true,
      requireTLS: false,
      auth: { user: 'u@x.io', pass: 'p:w' },
    })
    for (const local of ['smtp://localhost:1025', 'smtp://127.0.0.1:25', 'smtp://[::1]:25'])
      expect(smtpConnection(local).requireTLS, local).toBe(false)
    expect(smtpConnection('smtp://[2001:db8::1]:2525')).toMatchObject({
      host: '2001:db8::1',
      port: 2525,
      requireTLS: true,
    })
    expect(describeSmtpUrl('smtps://user:secret@mail.example.com:465')).toBe('smtps://mail.example.com:465')
  })
})

async function keyOf(certificate: TestCertificate): Promise<Buffer> {
  const { readFile } = await import('node:fs/promises')
  return readFile(certificate.keyFile)
}
