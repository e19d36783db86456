import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config/config-error.js'
import { languages } from '../../src/language/catalogues.js'
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
    factor: 'Authenticator app',
    reset_key: '7K3M-9QXD-2HNT-W4BV-0RZE-6JPA-C8GS',
    reset_link: 'https://app.example/reset?key=7K3M-9QXD-2HNT-W4BV-0RZE-6JPA-C8GS',
  }
  return Object.fromEntries(
    placeholdersOf(name).flatMap((key) => (key in values ? [[key, values[key] as string]] : [])),
  )
}

/** What a code mail says in each language: how long the code lasts, and that a mail one did not ask for is ignored. */
const CODE_MAIL_WORDS = {
  en: { lifetime: '10 minutes', ignore: 'you can ignore this message' },
  'zh-CN': { lifetime: '10 分钟', ignore: '请忽略此邮件' },
} as const

describe('the mail templates', () => {
  const temp = useTempDir('mail-templates')

  it('ship, in a folder per language of the catalogues, both parts of every message, each placeholder filled', async () => {
    const entries = (await readdir(BUILT_IN_TEMPLATES_DIR)).filter((entry) => entry !== 'README.md').sort()
    expect(entries).toEqual([...languages()].sort())
    expect(languages()).toEqual(['en', 'zh-CN'])
    const templates = await loadMailTemplates({ productName: 'Acme Docs', templatesDir: null })
    for (const language of languages()) {
      const files = (await readdir(join(BUILT_IN_TEMPLATES_DIR, language))).sort()
      expect(files, language).toEqual(
        TEMPLATE_NAMES.flatMap((name) => [`${name}.html`, `${name}.txt`]).sort(),
      )
      for (const name of TEMPLATE_NAMES) {
        const mail = templates.render(name, valuesFor(name), language)
        const at = `${language}/${name}`
        expect(mail.subject, at).toContain('Acme Docs')
        expect(mail.subject, at).not.toMatch(/[\r\n]|\{\{/)
        expect(mail.text, at).toContain('Acme Docs')
        expect(`${mail.text}${mail.html}`, at).not.toContain('{{')
        expect(mail.html, at).toMatch(/^<!doctype html>/)
        expect(mail.html, at).toContain(`<html lang="${language}">`)
        // the same values in both parts of every language: a translation leaves none out
        for (const value of Object.values(valuesFor(name))) {
          expect(mail.text, at).toContain(value)
          expect(mail.html, at).toContain(value)
        }
        if (name.startsWith('code_')) {
          // the code is in both parts, never in the subject (mail servers log subjects); its lifetime and the
          // advice to ignore a mail one did not ask for are in both
          const { lifetime, ignore } = CODE_MAIL_WORDS[language as keyof typeof CODE_MAIL_WORDS]
          for (const part of [mail.text, mail.html]) {
            expect(part, at).toContain('493817')
            expect(part, at).toContain(lifetime)
            expect(part, at).toContain(ignore)
          }
          expect(mail.subject, at).not.toContain('493817')
        }
      }
    }
  })

  it('write a message in the language asked for, and in English for any other or none', async () => {
    const templates = await loadMailTemplates({ productName: 'Acme', templatesDir: null })
    const chinese = templates.render('code_register', valuesFor('code_register'), 'zh-CN')
    expect(chinese.subject).toBe('你的 Acme 注册验证码')
    expect(chinese.text).toContain('要使用 owner@example.com 注册 Acme 账号，请输入以下验证码：')
    const english = templates.render('code_register', valuesFor('code_register'))
    expect(english.subject).toBe('Your code to create your Acme account')
    expect(templates.render('code_register', valuesFor('code_register'), 'en')).toEqual(english)
    // a language the service does not speak (a row queued by a version that spoke it): English
    expect(templates.render('code_register', valuesFor('code_register'), 'fr')).toEqual(english)
  })

  it('show the reset key, and the link with it, in both parts of a reset mail in every language; neither when empty', async () => {
    const templates = await loadMailTemplates({ productName: 'Acme', templatesDir: null })
    const values = valuesFor('code_reset_password')
    const words = {
      en: { key: 'If the code is refused, enter this reset key instead', link: 'Or open this link' },
      'zh-CN': { key: '如果验证码被拒绝，请改为输入以下重置密钥', link: '也可以打开以下链接' },
    }
    for (const language of languages()) {
      const said = words[language as keyof typeof words]
      const full = templates.render('code_reset_password', values, language)
      for (const part of [full.text, full.html]) {
        expect(part, language).toContain(said.key)
        expect(part, language).toContain(said.link)
        expect(part, language).toContain('7K3M-9QXD-2HNT-W4BV-0RZE-6JPA-C8GS')
      }
      expect(full.html).toContain(`<a href="${values.reset_link}"`)
      expect(full.subject).not.toContain('7K3M')
      // no PASSWORD_RESET_URL: the key, no link
      const keyOnly = templates.render('code_reset_password', { ...values, reset_link: '' }, language)
      for (const part of [keyOnly.text, keyOnly.html]) {
        expect(part, language).toContain(said.key)
        expect(part, language).not.toContain(said.link)
        expect(part, language).not.toContain('{{')
      }
      expect(keyOnly.html).not.toContain('<a ')
      // a reset queued before reset keys were made: the code alone, as the mail was before them
      const codeOnly = templates.render(
        'code_reset_password',
        { ...values, reset_key: '', reset_link: '' },
        language,
      )
      for (const part of [codeOnly.text, codeOnly.html]) {
        expect(part, language).toContain('493817')
        expect(part, language).not.toContain(said.key)
        expect(part, language).not.toContain('{{')
      }
      expect(codeOnly.text).not.toMatch(/\n\n\n/)
    }
  })

  it('refuse a section of MAIL_TEMPLATES_DIR without its other half, or of a placeholder the message lacks', async () => {
    const dir = join(temp.path, 'sections')
    await mkdir(dir)
    await writeFile(
      join(dir, 'code_reset_password.txt'),
      'Subject: Reset\n\n{{code}} {{#reset_key}}{{reset_key}}\n',
    )
    await expect(loadMailTemplates({ productName: 'Acme', templatesDir: dir })).rejects.toThrow(
      'MAIL_TEMPLATES_DIR has code_reset_password.txt, which has {{#reset_key}} without its other half',
    )
    await writeFile(
      join(dir, 'code_reset_password.txt'),
      'Subject: Reset\n\n{{code}} {{#new_email}}x{{/new_email}}\n',
    )
    await expect(loadMailTemplates({ productName: 'Acme', templatesDir: dir })).rejects.toThrow(
      'uses {{#new_email}}, a placeholder code_reset_password does not have',
    )
    // an operator's own text with sections of its own: kept or left out as the values say
    await writeFile(
      join(dir, 'code_reset_password.txt'),
      'Subject: Reset\n\n{{code}}{{#reset_key}} or {{reset_key}}{{#reset_link}} at {{reset_link}}{{/reset_link}}{{/reset_key}}.\n',
    )
    const templates = await loadMailTemplates({ productName: 'Acme', templatesDir: dir })
    const values = valuesFor('code_reset_password')
    expect(templates.render('code_reset_password', values).text).toBe(
      `493817 or ${values.reset_key} at ${values.reset_link}.\n`,
    )
    expect(templates.render('code_reset_password', { ...values, reset_link: '' }).text).toBe(
      `493817 or ${values.reset_key}.\n`,
    )
    expect(templates.render('code_reset_password', { ...values, reset_key: '', reset_link: '' }).text).toBe(
      '493817.\n',
    )
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

  it('are replaced, language by language, by the folders of MAIL_TEMPLATES_DIR named by a language', async () => {
    const dir = join(temp.path, 'languages')
    await mkdir(join(dir, 'zh-CN'), { recursive: true })
    await mkdir(join(dir, 'unrelated'))
    await temp.file('languages/code_login.txt', 'Subject: Sign in to {{product}}\n\nCode: {{code}}\n')
    await temp.file('languages/zh-CN/code_login.txt', 'Subject: 登录 {{product}}\n\n验证码：{{code}}\n')
    await temp.file('languages/unrelated/code_login.txt', 'not read: a folder of no language')
    const templates = await loadMailTemplates({ productName: 'Acme', templatesDir: dir })
    expect(templates.render('code_login', valuesFor('code_login')).text).toBe('Code: 493817\n')
    const chinese = templates.render('code_login', valuesFor('code_login'), 'zh-CN')
    expect(chinese.subject).toBe('登录 Acme')
    expect(chinese.text).toBe('验证码：493817\n')
    // an override in one language leaves the others as they were
    expect(templates.render('test', { email: 'a@example.com' }, 'zh-CN').subject).toBe('Acme 测试邮件')
    // English may have a folder too, as long as a file is not given twice
    const en = join(temp.path, 'english')
    await mkdir(join(en, 'en'), { recursive: true })
    await temp.file('english/en/test.txt', 'Subject: Hello from {{product}}\n\nHi\n')
    const fromFolder = await loadMailTemplates({ productName: 'Acme', templatesDir: en })
    expect(fromFolder.render('test', { email: 'a@example.com' }).subject).toBe('Hello from Acme')
    await temp.file('english/test.txt', 'Subject: Hello again\n\nHi\n')
    await expect(loadMailTemplates({ productName: 'Acme', templatesDir: en })).rejects.toThrow(
      'MAIL_TEMPLATES_DIR has en/test.txt and test.txt, the same message in the same language: keep one',
    )
  })

  it('refuse a file of a language folder that cannot be used, naming it with its folder', async () => {
    const dir = join(temp.path, 'bad-language')
    await mkdir(join(dir, 'zh-CN'), { recursive: true })
    await temp.file('bad-language/zh-CN/code_login.txt', 'Subject: x\n\n{{code}} {{password}}')
    await expect(loadMailTemplates({ productName: 'Acme', templatesDir: dir })).rejects.toThrow(
      /^MAIL_TEMPLATES_DIR has zh-CN\/code_login\.txt, which uses \{\{password\}\}/,
    )
    const unknown = join(temp.path, 'unknown-in-language')
    await mkdir(join(unknown, 'zh-CN'), { recursive: true })
    await temp.file('unknown-in-language/zh-CN/code_logn.html', '<p></p>')
    await expect(loadMailTemplates({ productName: 'Acme', templatesDir: unknown })).rejects.toThrow(
      /^MAIL_TEMPLATES_DIR has zh-CN\/code_logn\.html, which is the name of no message/,
    )
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
