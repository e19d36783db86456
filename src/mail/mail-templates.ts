import { readFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CODE_PURPOSES, type CodePurpose } from '../code-purpose.js'
import { ConfigError } from '../config/config-error.js'
import { describeFileError } from '../errors.js'
import { DEFAULT_LANGUAGE, languages } from '../language/catalogues.js'
import { PACKAGE_ROOT } from '../package-root.js'
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

/** The texts of every message in every language, read and checked at start. */
export interface MailTemplates {
  /**
   * The message `name` in `language` (the default language when absent or not one the service speaks), with
   * `values` in place of its placeholders (HTML-escaped in the HTML part), and its sections kept where their value is
   * not empty; `product` is added. Throws when a placeholder of the template has no value: the caller gives each
   * template its own (an empty one where a section is to be left out).
   */
  render(name: TemplateName, values: Readonly<Record<string, string>>, language?: string): RenderedMail
}

/** The placeholders every message has; `product` is MAIL_PRODUCT_NAME, `email` the address it goes to. */
const COMMON_PLACEHOLDERS = ['product', 'email'] as const

/**
 * The placeholders a template may use. The reset mail's `reset_key` and `reset_link` may be empty (a reset queued
 * before reset keys were made; no PASSWORD_RESET_URL): its texts show them inside sections (SECTION).
 */
export function placeholdersOf(name: TemplateName): readonly string[] {
  if (name === 'code_reset_password')
    return [...COMMON_PLACEHOLDERS, 'code', 'minutes', 'reset_key', 'reset_link']
  if (name.startsWith('code_')) return [...COMMON_PLACEHOLDERS, 'code', 'minutes']
  if (name === 'email_changed') return [...COMMON_PLACEHOLDERS, 'new_email']
  if (name === 'provider_linked') return [...COMMON_PLACEHOLDERS, 'provider']
  if (name === 'factor_added' || name === 'factor_removed') return [...COMMON_PLACEHOLDERS, 'factor']
  return COMMON_PLACEHOLDERS
}

/**
 * The built-in texts: mail-templates/ at the root of the package (beside src/ and dist/), one folder per language
 * of the message catalogues (`en/`, `zh-CN/`).
 */
export const BUILT_IN_TEMPLATES_DIR = fileURLToPath(new URL('mail-templates/', PACKAGE_ROOT))

const PLACEHOLDER = /\{\{(.*?)\}\}/g
/**
 * A section: `{{#name}}…{{/name}}`, whose text is kept when the placeholder `name` has a value that is not empty, and
 * left out, with its markers, when it is empty. Sections may hold placeholders and other sections, not one of their
 * own name.
 */
const SECTION = /\{\{\s*#\s*([^{}\s]+)\s*\}\}([\s\S]*?)\{\{\s*\/\s*\1\s*\}\}/g
/** A section's opening or closing marker. */
const SECTION_MARKER = /^\s*[#/]\s*(.*?)\s*$/

/** `text` with each section kept or left out as `keep` says of its name, the sections inside it the same way. */
function resolveSections(text: string, keep: (name: string) => boolean): string {
  let resolved = text
  for (;;) {
    const next = resolved.replace(SECTION, (_, name: string, inner: string) => (keep(name) ? inner : ''))
    if (next === resolved) return resolved
    resolved = next
  }
}
/** A `.txt` file: its subject line, an empty line, then the plain-text part. */
const TEXT_FILE = /^Subject:[ \t]*([^\r\n]*?)[ \t]*\r?\n\r?\n([\s\S]*)$/

/**
 * Reads the built-in texts of every language, then those of `templatesDir` (MAIL_TEMPLATES_DIR), which replace them
 * file by file: its files of the default language (English) at its top, as they always were, or in `en/`, and
 * those of another language in a folder named by its tag (`zh-CN/`). Whatever the operator's folder holds that
 * could not be used is found here, at start, not at a delivery: a folder that cannot be read, a `.txt` or `.html`
 * whose name is no template, a file given twice for English, a text without its subject line, a placeholder the
 * template does not have. Each is a ConfigError naming MAIL_TEMPLATES_DIR and the file.
 */
export async function loadMailTemplates(settings: {
  productName: string
  templatesDir: string | null
}): Promise<MailTemplates> {
  const spoken = languages()
  // the package's own files, read at start before the port opens, with nothing else to serve meanwhile: read one after
  // the other in this turn, the 60 of two languages take some 3 ms here, where as many promised reads took 15 to 22
  // ms of a cold start in round trips to libuv's threads (docs/performance.md, issue 34)
  const files = new Map<string, string>(
    spoken.flatMap((language) =>
      TEMPLATE_NAMES.flatMap((name) =>
        [`${language}/${name}.txt`, `${language}/${name}.html`].map(
          (file) => [file, readFileSync(join(BUILT_IN_TEMPLATES_DIR, file), 'utf8')] as const,
        ),
      ),
    ),
  )
  const overridden =
    settings.templatesDir === null
      ? new Map<string, string>()
      : await readOverrides(settings.templatesDir, files)
  const templates = new Map<string, RenderedMail>()
  for (const language of spoken) {
    for (const name of TEMPLATE_NAMES) {
      const problemIn = (file: string) => (problem: string) => {
        const given = overridden.get(file)
        return given !== undefined
          ? new ConfigError('MAIL_TEMPLATES_DIR', `has ${given}, which ${problem}`)
          : new Error(`the built-in mail template ${file} ${problem}`)
      }
      const at = `${language}/${name}`
      templates.set(
        at,
        parseTemplate(name, at, files.get(`${at}.txt`) ?? '', files.get(`${at}.html`) ?? '', problemIn),
      )
    }
  }
  return {
    render(name, values, language) {
      const spokenLanguage = language !== undefined && spoken.includes(language) ? language : DEFAULT_LANGUAGE
      const template = templates.get(`${spokenLanguage}/${name}`) as RenderedMail
      const all = { ...values, product: settings.productName }
      for (const placeholder of placeholdersOf(name)) {
        if (all[placeholder as keyof typeof all] === undefined)
          throw new Error(`the mail ${name} needs a value for {{${placeholder}}}`)
      }
      const given = (key: string) => all[key as keyof typeof all] !== ''
      const fill = (text: string, encode: (value: string) => string) =>
        resolveSections(text, given).replace(PLACEHOLDER, (_, key: string) =>
          encode(all[key.trim() as keyof typeof all] as string),
        )
      return {
        // one header line, whatever a value holds
        subject: fill(template.subject, (value) => value.replace(/[\r\n]+/g, ' ')),
        text: fill(template.text, (value) => value),
        html: fill(template.html, escapeHtml),
      }
    },
  }
}

/**
 * Puts the operator's files over the built-in ones in `files` (keyed `<language>/<file>`); returns those it
 * replaced, each with the name the operator gave it (`code_login.txt`, `zh-CN/code_login.txt`).
 */
async function readOverrides(dir: string, files: Map<string, string>): Promise<Map<string, string>> {
  const replaced = new Map<string, string>()
  const readFolder = async (folder: string, language: string, named: (entry: string) => string) => {
    const entries = await listFolder(folder, named(''))
    for (const entry of entries) {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) {
        if (language !== '') continue
        // a folder named by a language the service speaks, in any case; anything else is the operator's business
        const spoken = languages().find((tag) => tag.toLowerCase() === entry.name.toLowerCase())
        if (spoken !== undefined) await readFolder(path, spoken, (file) => `${entry.name}/${file}`)
        continue
      }
      // anything else (a README, a backup~) is the operator's business
      if (!entry.name.endsWith('.txt') && !entry.name.endsWith('.html')) continue
      const key = `${language || DEFAULT_LANGUAGE}/${entry.name}`
      if (!files.has(key)) {
        throw new ConfigError(
          'MAIL_TEMPLATES_DIR',
          `has ${named(entry.name)}, which is the name of no message (they are ${TEMPLATE_NAMES.join(', ')}; each .txt or .html)`,
        )
      }
      const earlier = replaced.get(key)
      if (earlier !== undefined) {
        throw new ConfigError(
          'MAIL_TEMPLATES_DIR',
          `has ${earlier} and ${named(entry.name)}, the same message in the same language: keep one`,
        )
      }
      try {
        files.set(key, await readFile(path, 'utf8'))
      } catch (error) {
        throw new ConfigError(
          'MAIL_TEMPLATES_DIR',
          `has ${named(entry.name)}, which cannot be read: ${describeFileError(error)}`,
          { cause: error },
        )
      }
      replaced.set(key, named(entry.name))
    }
  }
  await readFolder(dir, '', (file) => file)
  return replaced
}

/** The entries of a folder of MAIL_TEMPLATES_DIR (`name` is how the operator knows it: '' for the folder itself). */
async function listFolder(folder: string, name: string) {
  try {
    const entries = await readdir(folder, { withFileTypes: true })
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  } catch (error) {
    const which = name === '' ? '' : ` (its ${name.replace(/\/$/, '')} folder)`
    throw new ConfigError('MAIL_TEMPLATES_DIR', `cannot be read${which}: ${describeFileError(error)}`, {
      cause: error,
    })
  }
}

function parseTemplate(
  name: TemplateName,
  at: string,
  textFile: string,
  html: string,
  problemIn: (file: string) => (problem: string) => Error,
): RenderedMail {
  const textProblem = problemIn(`${at}.txt`)
  const parts = TEXT_FILE.exec(textFile.replace(/^\uFEFF/, ''))
  if (parts === null || parts[1] === '')
    throw textProblem('does not start with its subject line ("Subject: …") and an empty line')
  const template = {
    subject: parts[1] as string,
    text: parts[2] as string,
    html: html.replace(/^\uFEFF/, ''),
  }
  checkPlaceholders(name, `${template.subject}\n${template.text}`, textProblem)
  checkPlaceholders(name, template.html, problemIn(`${at}.html`))
  return template
}

function checkPlaceholders(name: TemplateName, text: string, problem: (text: string) => Error): void {
  const known = placeholdersOf(name)
  for (const [whole, key] of text.matchAll(PLACEHOLDER)) {
    const placeholder = SECTION_MARKER.exec(key as string)?.[1] ?? (key as string).trim()
    if (!known.includes(placeholder)) {
      throw problem(
        `uses ${whole}, a placeholder ${name} does not have (its placeholders: ${known.map((k) => `{{${k}}}`).join(', ')})`,
      )
    }
  }
  // every section closed, in the order it was opened: once each is resolved, no marker is left over
  const unpaired = [...resolveSections(text, () => true).matchAll(PLACEHOLDER)].find(([, key]) =>
    SECTION_MARKER.test(key as string),
  )
  if (unpaired !== undefined)
    throw problem(`has ${unpaired[0]} without its other half (a section is {{#name}}…{{/name}})`)
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
