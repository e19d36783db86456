import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'
import { describe, expect, it } from 'vitest'
import { createEmlFileTransport } from '../../src/mail/eml-file-transport.js'
import { DEVELOPMENT_OUTBOX, openMailTransport } from '../../src/mail/open-mail-transport.js'
import { useTempDir } from '../support/temp-dir.js'
import { SAMPLE_MAIL as MAIL } from './mail-harness.js'

describe('the development outbox (.eml files)', () => {
  const temp = useTempDir('eml-transport')

  it('writes each message as a MIME file named after its outbox id, readable by its owner only', async () => {
    const dir = join(temp.path, 'data', 'outbox')
    const result = await createEmlFileTransport({ dir }).send(MAIL)
    const file = join(dir, '0123456789abcdef0123456789abcdef.eml')
    expect(result).toEqual({ delivered: true, response: `written to ${file}`, file })
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    const raw = await readFile(file, 'utf8')
    expect(raw).toContain('\r\n')
    const parsed = await simpleParser(raw)
    expect(parsed.subject).toBe(MAIL.subject)
    expect(parsed.text).toBe(MAIL.text)
    expect(parsed.html).toBe(MAIL.html)
    expect(parsed.messageId).toBe(MAIL.messageId)
    expect(parsed.headers.get('auto-submitted')).toBe('auto-generated')
  })

  it('replaces the file of a message written again, and leaves no draft behind', async () => {
    const dir = join(temp.path, 'again')
    const transport = createEmlFileTransport({ dir })
    await transport.send(MAIL)
    await transport.send({ ...MAIL, subject: 'second' })
    expect(await readdir(dir)).toEqual(['0123456789abcdef0123456789abcdef.eml'])
    expect(
      (await simpleParser(await readFile(join(dir, '0123456789abcdef0123456789abcdef.eml')))).subject,
    ).toBe('second')
  })

  it('fails, to be tried again, when the folder cannot be written', async () => {
    const blocker = join(temp.path, 'blocker')
    await writeFile(blocker, 'a file where the folder should be')
    const result = await createEmlFileTransport({ dir: join(blocker, 'outbox') }).send(MAIL)
    expect(result).toEqual({
      delivered: false,
      permanent: false,
      reason: expect.stringMatching(
        /^cannot write .*blocker\/outbox\/0123456789abcdef0123456789abcdef\.eml: ENOTDIR$/,
      ),
    })
  })

  it('is what development and test use without SMTP_URL, under DATA_DIR; production has none', async () => {
    const mail = { smtpUrl: null, sendTimeoutSeconds: 30, sendConnections: 5 }
    const development = await openMailTransport({ ...mail, available: true }, temp.path)
    expect(development?.description).toBe(
      `${join(temp.path, DEVELOPMENT_OUTBOX)} (development outbox: .eml files)`,
    )
    expect(await openMailTransport({ ...mail, available: false }, temp.path)).toBeNull()
  })
})
