import { chmod, mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config/config-error.js'
import {
  BUILT_IN_TEMPLATES_DIR,
  loadMailTemplates,
  placeholdersOf,
  TEMPLATE_NAMES,
  type TemplateName,
} from '../../src/mail/mail-templates.js'
import { useTempDir } from '../support/temp-dir.js'

/** A value for each placeholder of `name`, which shows where it went. */
function valuesFor(name: TemplateName): Record<string, string> {
  const values: Record<string, string> = {
    email: 'owner@example.com',
    code: '493817',
    minutes: '10',
    new_email: 'new@example.com',
    provider: 'google',
  }
  return Object.fromEntries(
    placeholdersOf(name).flatMap((key) => (key in values ? [[key, values[key] as string]] : [])),
  )
}

describe('the mail templates', () => {
  const temp = useTempDir('mail-templates')

  it('ship a plain-text part with a subject and an HTML part for every message, each placeholder filled', async () => {
    const files = (await readdir(BUILT_IN_TEMPLATES_DIR)).filter((file) => file !== 'README.md').sort()
    expect(files).toEqual(TEMPLATE_NAMES.flatMap((name) => [`${name}.html`, `${name}.txt`]).sort())
    const templates = await loadMailTemplates({ productName: 'Acme Docs', templatesDir: null })
    for (const name of TEMPLATE_NAMES) {
      const mail = templates.render(name, valuesFor(name))
      expect(mail.subject, name).toContain('Acme Docs')
      expect(mail.subject, name).not.toMatch(/[\r\n]|\{\{/)
      expect(mail.text, name).toContain('Acme Docs')
      expect(`${mail.text}${mail.html}`, name).not.toContain('{{')
      expect(mail.html, name).toMatch(/^<!doctype html>/)
      if (name.startsWith('code_')) {
        // the code is in both parts, never in the subject (mail servers log subjects); its lifetime and the advice
        // to ignore a mail one did not ask for are in both
        for (const part of [mail.text, mail.html]) {
          expect(part, name).toContain('493817')
          expect(part, name).toContain('10 minutes')
          expect(part, name).toContain('you can ignore this message')
        }
        expect(mail.subject, name).not.toContain('493817')
      }
    }
  })

  it('say what each message is for', async () => {
    const templates = await loadMailTemplates({ productName: 'Acme', templatesDir: null })
    expect(templates.render('register_taken', { email: 'owner@example.com' }).text).toMatch(
      /already have an account[\s\S]*Forgot password/,
    )
    const changed = templates.render('email_changed', {
      email: 'old@example.com',
      new_email: 'new@example.com',
    })
    expect(changed.text).toContain('from old@example.com to new@example.com')
    expect(templates.render('test', { email: 'ops@example.com' }).subject).toBe('Acme test message')
  })

  it('escape the values in the HTML part only', async () => {
    const templates = await loadMailTemplates({ productName: `<b>"Tom" & Jerry's</b>`, templatesDir: null })
    const mail = templates.render('test', { email: 'a@example.com' })
    expect(mail.html).toContain('&lt;b&gt;&quot;Tom&quot; &amp; Jerry&#39;s&lt;/b&gt;')
    expect(mail.html).not.toContain('<b>"Tom"')
    expect(mail.text).toContain(`<b>"Tom" & Jerry's</b>`)
    expect(mail.subject).toBe(`<b>"Tom" & Jerry's</b> test message`)
  })

  it('are replaced file by file by those of MAIL_TEMPLATES_DIR', async () => {
    const dir = join(temp.path, 'override')
    await mkdir(dir)
    await temp.file(
      'override/code_login.txt',
      'Subject: Sign in to {{ product }}\n\nCode: {{code}} ({{minutes}} min)\n',
    )
    await temp.file('override/test.html', '<p>Hello {{email}} from {{product}}</p>')
    await temp.file('override/notes.md', 'not a template: ignored')
    const templates = await loadMailTemplates({ productName: 'Acme', templatesDir: dir })
    const login = templates.render('code_login', valuesFor('code_login'))
    expect(login.subject).toBe('Sign in to Acme')
    expect(login.text).toBe('Code: 493817 (10 min)\n')
    // the HTML part of the same message is still the built-in one
    expect(login.html).toContain('<!doctype html>')
    const test = templates.render('test', { email: 'a@example.com' })
    expect(test.html).toBe('<p>Hello a@example.com from Acme</p>')
    expect(test.subject).toBe('Acme test message')
  })

  it.each([
    [
      'an unknown placeholder',
      'code_login.txt',
      'Subject: x\n\n{{code}} {{password}}',
      /code_login\.txt.*\{\{password\}\}/,
    ],
    [
      'a placeholder of another message',
      'password_changed.html',
      '<p>{{code}}</p>',
      /password_changed\.html.*\{\{code\}\}/,
    ],
    [
      'an unknown placeholder in the subject',
      'test.txt',
      'Subject: {{nope}}\n\nbody',
      /test\.txt.*\{\{nope\}\}/,
    ],
    ['a text without its subject line', 'test.txt', 'Hello {{email}}', /test\.txt.*Subject/],
    [
      'a file that names no message',
      'code_logn.txt',
      'Subject: x\n\ny',
      /code_logn\.txt.*name of no message/,
    ],
  ])('refuse %s at start, naming MAIL_TEMPLATES_DIR and the file', async (_, file, text, message) => {
    const dir = join(temp.path, `bad-${file}-${text.length}`)
    await mkdir(dir)
    await temp.file(join(dir.slice(temp.path.length + 1), file), text)
    const loading = loadMailTemplates({ productName: 'Acme', templatesDir: dir })
    await expect(loading).rejects.toThrow(ConfigError)
    await expect(loading).rejects.toThrow(/^MAIL_TEMPLATES_DIR /)
    await expect(loading).rejects.toThrow(message)
  })

  it('refuse a MAIL_TEMPLATES_DIR that cannot be read', async () => {
    const missing = loadMailTemplates({ productName: 'Acme', templatesDir: join(temp.path, 'missing') })
    await expect(missing).rejects.toThrow(ConfigError)
    await expect(missing).rejects.toThrow('MAIL_TEMPLATES_DIR cannot be read: ENOENT')
    const file = await temp.file('a-file', 'x')
    await expect(loadMailTemplates({ productName: 'Acme', templatesDir: file })).rejects.toThrow(
      'MAIL_TEMPLATES_DIR cannot be read: ENOTDIR',
    )
    if (process.getuid?.() !== 0) {
      const locked = join(temp.path, 'locked')
      await mkdir(locked)
      await temp.file('locked/test.txt', 'Subject: x\n\ny')
      await chmod(join(locked, 'test.txt'), 0)
      await expect(loadMailTemplates({ productName: 'Acme', templatesDir: locked })).rejects.toThrow(
        'MAIL_TEMPLATES_DIR has test.txt, which cannot be read: EACCES',
      )
    }
  })

  it('refuse to render a message without a value for one of its placeholders', async () => {
    const templates = await loadMailTemplates({ productName: 'Acme', templatesDir: null })
    expect(() => templates.render('email_changed', { email: 'a@example.com' })).toThrow('{{new_email}}')
  })
})
