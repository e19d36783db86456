import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MAIL_USAGE } from '../../src/commands/mail.js'
import { makeCertificate, type TestCertificate } from '../support/certificates.js'
import { runCli } from '../support/process.js'
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js'
import { useTempDir } from '../support/temp-dir.js'

describe('tessera mail test', () => {
  const temp = useTempDir('mail-command')
  let certificate: TestCertificate
  let smtp: TestSmtpServer | null = null
  /** The variables of every run: its own DATA_DIR, never the repository's ./data. */
  const env = (extra: Record<string, string> = {}) => ({
    DATA_DIR: join(temp.path, 'data'),
    MAIL_PRODUCT_NAME: 'Acme',
    MAIL_FROM: 'Acme <no-reply@example.com>',
    ...extra,
  })

  beforeAll(async () => {
    certificate = await makeCertificate(temp.path, 'smtp')
  })
  afterEach(async () => {
    await smtp?.stop()
    smtp = null
  })

  it('sends the test message through SMTP_URL at once and prints the server’s answer', async () => {
    smtp = await startSmtpServer()
    const run = await runCli(['mail', 'test', 'Owner@Example.com'], env({ SMTP_URL: smtp.url }))
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout).toMatch(
      new RegExp(
        `^sent to owner@example\\.com by smtp://127\\.0\\.0\\.1:${smtp.port}\\nthe server answered: 250 .*\\n$`,
      ),
    )
    const received = await smtp.next()
    expect(received).toMatchObject({
      to: ['owner@example.com'],
      from: 'no-reply@example.com',
      subject: 'Acme test message',
    })
    expect(received.text).toContain('sent by `tessera mail test`')
    expect(received.messageId).toMatch(/^<[0-9a-f]{32}@example\.com>$/)
  })

  it('upgrades with STARTTLS to a server the operator’s NODE_EXTRA_CA_CERTS trusts, and logs in', async () => {
    smtp = await startSmtpServer({
      tls: { key: await readFile(certificate.keyFile), cert: certificate.cert },
      login: { user: 'mailer', pass: 's3cret' },
    })
    const run = await runCli(['mail', 'test', 'owner@example.com'], {
      ...env({ SMTP_URL: smtp.url }),
      NODE_EXTRA_CA_CERTS: certificate.certFile,
    })
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(await smtp.next()).toMatchObject({ secure: true, user: 'mailer' })
    // the credentials of SMTP_URL are never printed
    expect(run.stdout).not.toContain('s3cret')
  })

  it('says, in one line and with exit code 1, why the message was not sent', async () => {
    smtp = await startSmtpServer()
    smtp.refuse('permanent')
    const refused = await runCli(['mail', 'test', 'owner@example.com'], env({ SMTP_URL: smtp.url }))
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(
      new RegExp(
        `^tessera mail: not sent to owner@example\\.com by smtp://127\\.0\\.0\\.1:${smtp.port}: .*550 .*\\n$`,
      ),
    )
    await smtp.stop()
    const down = await runCli(['mail', 'test', 'owner@example.com'], env({ SMTP_URL: smtp.url }))
    expect(down.code).toBe(1)
    expect(down.stderr).toMatch(/^tessera mail: not sent .*ECONNREFUSED.*\n$/)
  })

  it('writes the .eml file without SMTP_URL in development, and prints its path', async () => {
    const run = await runCli(['mail', 'test', 'owner@example.com'], env({ NODE_ENV: 'development' }))
    expect(run).toMatchObject({ code: 0, stderr: '' })
    const file = /^written to (\S+\.eml) \(no SMTP_URL: the development outbox\)\n$/.exec(run.stdout)?.[1]
    expect(file?.startsWith(join(temp.path, 'data', 'outbox'))).toBe(true)
    const parsed = await simpleParser(await readFile(file as string))
    expect(parsed.subject).toBe('Acme test message')
  })

  it('refuses in production without SMTP_URL, and with templates it cannot use', async () => {
    const production = await runCli(['mail', 'test', 'owner@example.com'], env({ NODE_ENV: 'production' }))
    expect(production).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'tessera mail: no mail can be sent: SMTP_URL is not set (in production, mail goes by SMTP only)\n',
    })
    const dir = join(temp.path, 'templates')
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, 'test.txt'), 'Subject: {{nope}}\n\nbody')
    const templates = await runCli(['mail', 'test', 'owner@example.com'], env({ MAIL_TEMPLATES_DIR: dir }))
    expect(templates.code).toBe(1)
    expect(templates.stderr).toMatch(
      /^tessera mail: MAIL_TEMPLATES_DIR has test\.txt, which uses \{\{nope\}\}/,
    )
  })

  it('prints its help, and refuses a command line it cannot run with exit code 2', async () => {
    expect(await runCli(['mail', '--help'])).toEqual({ code: 0, stdout: MAIL_USAGE, stderr: '' })
    expect(MAIL_USAGE).toMatch(/^Usage: tessera mail test <address>/)
    for (const [args, message] of [
      [['mail'], 'missing subcommand: test'],
      [['mail', 'send'], 'unknown subcommand "send"'],
      [['mail', 'test'], 'mail test needs the address to send to'],
      [['mail', 'test', 'not-an-address'], '"not-an-address" is not an e-mail address'],
      [['mail', 'test', 'a@example.com', 'b@example.com'], 'unexpected argument "b@example.com"'],
    ] as const) {
      const run = await runCli([...args], env())
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toBe(`tessera mail: ${message}\n${MAIL_USAGE}`)
    }
    expect((await runCli(['--help'])).stdout).toContain('mail test <address>')
  })
})
