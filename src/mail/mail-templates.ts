import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CODE_PURPOSES, type CodePurpose } from '../code-purpose.js'
import { ConfigError } from '../config/config-error.js'
import { describeFileError } from '../errors.js'
import { NOTICE_NAMES } from './mail-intent.js'

/** The texts a mail is written with: a code for each purpose, the notices, and the test message. */
export const TEMPLATE_NAMES = [
  ...CODE_PURPOSES.map((purpose) => `code_${purpose}` as const),
  'register_taken',
  ...NOTICE_NAMES,
  'test',
] as const
export type TemplateName = (typeof TEMPLATE_NAMES)[number]

/** The template of a code mail of `purpose`. */
export const codeTemplate = (purpose: CodePurpose): TemplateName => `code_${purpose}`

/** A message's three texts, ready to be composed. */
export interface RenderedMail {
  subject: string
  text: string
  html: string
}

/** The texts of every message, read and checked at start. */
export interface MailTemplates {
  /**
   * The message `name` with `values` in place of its placeholders (HTML-escaped in the HTML part); `product` is
   * added. Throws when a placeholder of the template has no value: the caller gives each template its own.
   */
  render(name: TemplateName, values: Readonly<Record<string, string>>): RenderedMail
}

/** The placeholders every message has; `product` is MAIL_PRODUCT_NAME, `email` the address it goes to. */
const COMMON_PLACEHOLDERS = ['product', 'email'] as const

/** The placeholders a template may use. */
export function placeholdersOf(name: TemplateName): readonly string[] {
  if (name.startsWith('code_')) return [...COMMON_PLACEHOLDERS, 'code', 'minutes']
  if (name === 'email_changed') return [...COMMON_PLACEHOLDERS, 'new_email']
  if (name === 'provider_linked') return [...COMMON_PLACEHOLDERS, 'provider']
  return COMMON_PLACEHOLDERS
}

/** The built-in texts: mail-templates/ at the root of the package (beside src/ and dist/). */
export const BUILT_IN_TEMPLATES_DIR = fileURLToPath(new URL('../../mail-templates/', import.meta.url))

const PLACEHOLDER = /\{\{(.*?)\}\}/g
/** A `.txt` file: its subject line, an empty line, then the plain-text part. */
const TEXT_FILE = /^Subject:[ \t]*([^\r\n]*?)[ \t]*\r?\n\r?\n([\s\S]*)$/

/**
 * Reads the built-in texts, then those of `templatesDir` (MAIL_TEMPLATES_DIR), which replace them file by file.
 * Whatever the operator's folder holds that could not be used is found here, at start, not at a delivery: a folder
 * that cannot be read, a `.txt` or `.html` whose name is no template, a text without its subject line, a
 * placeholder the template does not have. Each is a ConfigError naming MAIL_TEMPLATES_DIR and the file.
 */
export async function loadMailTemplates(settings: {
  productName: string
  templatesDir: string | null
}): Promise<MailTemplates> {
  const files = new Map<string, string>()
  for (const name of TEMPLATE_NAMES) {
    for (const file of [`${name}.txt`, `${name}.html`])
      files.set(file, await readFile(join(BUILT_IN_TEMPLATES_DIR, file), 'utf8'))
  }
  const overridden = settings.templatesDir === null ? [] : await readOverrides(settings.templatesDir, files)
  const templates = new Map<TemplateName, RenderedMail>()
  for (const name of TEMPLATE_NAMES) {
    const problemIn = (file: string) => (problem: string) =>
      overridden.includes(file)
        ? new ConfigError('MAIL_TEMPLATES_DIR', `has ${file}, which ${problem}`)
        : new Error(`the built-in mail template ${file} ${problem}`)
    templates.set(
      name,
      parseTemplate(name, files.get(`${name}.txt`) ?? '', files.get(`${name}.html`) ?? '', problemIn),
    )
  }
  return {
    render(name, values) {
      const template = templates.get(name) as RenderedMail
      const all = { ...values, product: settings.productName }
      for (const placeholder of placeholdersOf(name)) {
        if (all[placeholder as keyof typeof all] === undefined)
          throw new Error(`the mail ${name} needs a value for {{${placeholder}}}`)
      }
      const fill = (text: string, encode: (value: string) => string) =>
        text.replace(PLACEHOLDER, (_, key: string) => encode(all[key.trim() as keyof typeof all] as string))
      return {
        // one header line, whatever a value holds
        subject: fill(template.subject, (value) => value.replace(/[\r\n]+/g, ' ')),
        text: fill(template.text, (value) => value),
        html: fill(template.html, escapeHtml),
      }
    },
  }
}

/** Puts the operator's files over the built-in ones in `files`; returns the names of those it replaced. */
async function readOverrides(dir: string, files: Map<string, string>): Promise<string[]> {
  let entries: string[]
  try {
    entries = await readdir(dir)
  } catch (error) {
    throw new ConfigError('MAIL_TEMPLATES_DIR', `cannot be read: ${describeFileError(error)}`, {
      cause: error,
    })
  }
  const replaced: string[] = []
  for (const entry of entries.sort()) {
    // anything else (a README, a backup~) is the operator's business
    if (!entry.endsWith('.txt') && !entry.endsWith('.html')) continue
    if (!files.has(entry)) {
      throw new ConfigError(
        'MAIL_TEMPLATES_DIR',
        `has ${entry}, which is the name of no message (they are ${TEMPLATE_NAMES.join(', ')}; each .txt or .html)`,
      )
    }
    try {
      files.set(entry, await readFile(join(dir, entry), 'utf8'))
    } catch (error) {
      throw new ConfigError(
        'MAIL_TEMPLATES_DIR',
        `has ${entry}, which cannot be read: ${describeFileError(error)}`,
        {
          cause: error,
        },
      )
    }
    replaced.push(entry)
  }
  return replaced
}

function parseTemplate(
  name: TemplateName,
  textFile: string,
  html: string,
  problemIn: (file: string) => (problem: string) => Error,
): RenderedMail {
  const textProblem = problemIn(`${name}.txt`)
  const parts = TEXT_FILE.exec(textFile.replace(/^\uFEFF/, ''))
  if (parts === null || parts[1] === '')
    throw textProblem('does not start with its subject line ("Subject: …") and an empty line')
  const template = {
    subject: parts[1] as string,
    text: parts[2] as string,
    html: html.replace(/^\uFEFF/, ''),
  }
  checkPlaceholders(name, `${template.subject}\n${template.text}`, textProblem)
  checkPlaceholders(name, template.html, problemIn(`${name}.html`))
  return template
}

function checkPlaceholders(name: TemplateName, text: string, problem: (text: string) => Error): void {
  const known = placeholdersOf(name)
  for (const [whole, key] of text.matchAll(PLACEHOLDER)) {
    if (!known.includes((key as string).trim())) {
      throw problem(
        `uses ${whole}, a placeholder ${name} does not have (its placeholders: ${known.map((k) => `{{${k}}}`).join(', ')})`,
      )
    }
  }
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** A value as HTML text, also safe inside a quoted attribute. */
function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] as string)
}
