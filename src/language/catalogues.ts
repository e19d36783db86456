import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PACKAGE_ROOT } from '../package-root.js'
import type { Message } from './message.js'

/**
 * The message catalogues: messages/ at the root of the package (beside src/ and dist/), one `<language>.json` per
 * language, named by its tag (`en`, `zh-CN`). A third language is a third file (and a folder of mail templates).
 */
export const CATALOGUES_DIR = fileURLToPath(new URL('messages/', PACKAGE_ROOT))

/** The language of every answer whose client prefers none the service speaks, of the logs and of the commands. */
export const DEFAULT_LANGUAGE = 'en'

/** One language's texts. */
export interface Catalogue {
  /** Its tag, the file's name: what `Content-Language` says and where its mail templates are. */
  readonly language: string
  /**
   * The language ranges of `Accept-Language` it answers (accept-language.ts): a language (`zh`), a language with
   * a script (`zh-Hans`) or a region (`zh-CN`), or any tag of a language (`en-*`).
   */
  readonly accepts: readonly string[]
  readonly messages: Readonly<Record<string, string>>
}

const PLACEHOLDER = /\{([a-z_]+)\}/g
const TAG = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/
const RANGE = /^[a-z]{2,3}(-([A-Za-z0-9]{2,8}|\*))?$/

let loaded: ReadonlyMap<string, Catalogue> | null = null

/**
 * Every catalogue, read once, on first use (the service reads them at start): the default language's first. Each is
 * checked against the default's: the same keys, and no placeholder its English text does not have. A catalogue that
 * breaks that is a fault of the package, and throws.
 */
export function catalogues(): ReadonlyMap<string, Catalogue> {
  loaded ??= readCatalogues(CATALOGUES_DIR)
  return loaded
}

/** The tags of the languages the service speaks, the default's first. */
export function languages(): readonly string[] {
  return [...catalogues().keys()]
}

/** `message` written in `language` (the default language when it speaks no such language). */
export function render(language: string, message: Message): string {
  const all = catalogues()
  const catalogue = all.get(language) ?? (all.get(DEFAULT_LANGUAGE) as Catalogue)
  // a key no catalogue has is a fault the tests find (test/language/catalogues.test.ts); an answer still goes out
  const text = catalogue.messages[message.key] ?? message.key
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const value = message.values[name]
    if (value === undefined) return whole
    return typeof value === 'object' ? render(catalogue.language, value) : String(value)
  })
}

/** `message` in the default language: an error's `message`, what logs and the commands print. */
export function english(message: Message): string {
  return render(DEFAULT_LANGUAGE, message)
}

/** The placeholders of a catalogue text, in order. */
export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((match) => match[1] as string)
}

/** Reads and checks the catalogues of `dir` (exported for the tests, which check a broken one is refused). */
export function readCatalogues(dir: string): ReadonlyMap<string, Catalogue> {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
  const read = new Map<string, Catalogue>()
  for (const file of files) {
    const language = file.slice(0, -'.json'.length)
    if (!TAG.test(language)) throw new Error(`the message catalogue ${file} is not named by a language tag`)
    read.set(language, parseCatalogue(language, readFileSync(join(dir, file), 'utf8')))
  }
  const reference = read.get(DEFAULT_LANGUAGE)
  if (reference === undefined) throw new Error(`there is no message catalogue ${DEFAULT_LANGUAGE}.json`)
  const accepted = new Map<string, string>()
  for (const catalogue of read.values()) {
    checkAgainst(reference, catalogue)
    for (const range of catalogue.accepts) {
      const other = accepted.get(range.toLowerCase())
      if (other !== undefined)
        throw new Error(
          `the message catalogues ${other}.json and ${catalogue.language}.json both accept ${range}`,
        )
      accepted.set(range.toLowerCase(), catalogue.language)
    }
  }
  return new Map([[DEFAULT_LANGUAGE, reference], ...[...read].filter(([tag]) => tag !== DEFAULT_LANGUAGE)])
}

function parseCatalogue(language: string, text: string): Catalogue {
  const problem = (what: string) => new Error(`the message catalogue ${language}.json ${what}`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw problem(`is not JSON: ${(error as Error).message}`)
  }
  const { accepts, messages } = (value ?? {}) as { accepts?: unknown; messages?: unknown }
  if (!Array.isArray(accepts) || !accepts.every((range) => typeof range === 'string' && RANGE.test(range)))
    throw problem('needs "accepts", a list of language ranges such as "zh", "zh-Hans", "zh-CN" or "en-*"')
  if (
    typeof messages !== 'object' ||
    messages === null ||
    !Object.values(messages).every((entry) => typeof entry === 'string')
  )
    throw problem('needs "messages", an object of texts')
  return { language, accepts, messages: messages as Record<string, string> }
}

/** A catalogue has the keys of the default's, and no placeholder the default's text of a key does not have. */
function checkAgainst(reference: Catalogue, catalogue: Catalogue): void {
  const problem = (what: string) => new Error(`the message catalogue ${catalogue.language}.json ${what}`)
  for (const key of Object.keys(reference.messages)) {
    if (!(key in catalogue.messages)) throw problem(`has no text for ${key}`)
  }
  for (const [key, text] of Object.entries(catalogue.messages)) {
    const english = reference.messages[key]
    if (english === undefined) throw problem(`has ${key}, which ${reference.language}.json does not have`)
    const known = placeholdersIn(english)
    const unknown = placeholdersIn(text).find((name) => !known.includes(name))
    if (unknown !== undefined) throw problem(`uses {${unknown}} in ${key}, which has no such value`)
  }
}
