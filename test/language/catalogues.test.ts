import { readdirSync, readFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { STATUS_CODES } from 'node:http'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { STATUS_TEXTS } from '../../src/errors.js'
import {
  CATALOGUES_DIR,
  catalogues,
  english,
  languages,
  placeholdersIn,
  readCatalogues,
  render,
} from '../../src/language/catalogues.js'
import { counted, message } from '../../src/language/message.js'
import { useTempDir } from '../support/temp-dir.js'

// docs/api.md R1.19: the texts are data, one catalogue per language, and every one of them has every text

const SRC = resolve(import.meta.dirname, '../../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.ts$/.test(entry.name) ? [path] : []
  })
}

/** The families of keys the code names: every key of a catalogue is one of them. */
const KEY = /['`]((?:error|field|type|status|length|sign_in)\.[a-z0-9_.]+)['`]/g

/** Every key the source names in a string literal. */
function keysInSource(): Set<string> {
  const keys = new Set<string>()
  for (const file of sourceFiles(SRC)) {
    for (const match of readFileSync(file, 'utf8').matchAll(KEY)) keys.add(match[1] as string)
  }
  return keys
}

/**
 * The keys the code makes rather than names: the reason phrase of each status of STATUS_TEXTS (`status.${code}`) and
 * each JSON type (`type.${name}`).
 */
const MADE_KEYS = [
  ...[...STATUS_TEXTS].map((status) => `status.${status}`),
  ...['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'].map((type) => `type.${type}`),
]

/** A key as the code names it: itself, or both its counts when it is a `counted` one (`length.characters`). */
const formsOf = (key: string) => [key, `${key}.one`, `${key}.other`]

/** Chinese characters (CJK Unified Ideographs): what a text written in Chinese has. */
const HAN = /\p{Script=Han}/u

describe('the message catalogues', () => {
  const temp = useTempDir('catalogues')

  it('are one file per language: English, the default, and Simplified Chinese', () => {
    expect(readdirSync(CATALOGUES_DIR).sort()).toEqual(['en.json', 'zh-CN.json'])
    expect(languages()).toEqual(['en', 'zh-CN'])
  })

  it('R1.19 give every language a text for every key, with no placeholder the English text lacks', () => {
    const english = catalogues().get('en')?.messages ?? {}
    expect(Object.keys(english).length).toBeGreaterThan(100)
    for (const [language, catalogue] of catalogues()) {
      expect(Object.keys(catalogue.messages).sort(), language).toEqual(Object.keys(english).sort())
      for (const [key, text] of Object.entries(catalogue.messages)) {
        expect(text.trim(), `${language} ${key}`).not.toBe('')
        for (const name of placeholdersIn(text))
          expect(placeholdersIn(english[key] as string), `${language} ${key}`).toContain(name)
      }
    }
  })

  it('R1.19 hold every key the code names or makes, and no other', () => {
    const named = keysInSource()
    const keys = Object.keys(catalogues().get('en')?.messages ?? {})
    const missing = [...named, ...MADE_KEYS].filter(
      (key) => !keys.includes(key) && !(keys.includes(`${key}.one`) && keys.includes(`${key}.other`)),
    )
    expect(missing).toEqual([])
    const made = new Set([...named, ...MADE_KEYS].flatMap(formsOf))
    const unused = keys.filter((key) => !made.has(key))
    expect(unused).toEqual([])
  })

  it('write the Chinese catalogue in Chinese: every text but a type name has Chinese characters', () => {
    for (const [key, text] of Object.entries(catalogues().get('zh-CN')?.messages ?? {})) {
      if (key === 'type.null' || key === 'type.either') continue
      expect(text, key).toMatch(HAN)
    }
  })

  it("hold Node's reason phrase of every client error in English", () => {
    for (const status of STATUS_TEXTS) {
      expect(STATUS_CODES[status], String(status)).toBeDefined()
      expect(english(message(`status.${status}`))).toBe(STATUS_CODES[status])
    }
  })

  it('write a message with its values, a value that is a message in the same language', () => {
    const invalid = message('error.validation_failed', {
      field: '/password',
      problem: message('field.max_length', { length: counted('length.characters', 100) }),
    })
    expect(english(invalid)).toBe('Invalid request: /password must have at most 100 characters')
    expect(render('zh-CN', invalid)).toBe('请求无效：/password 长度不能超过 100 个字符')
    expect(english(counted('length.characters', 1))).toBe('1 character')
    expect(render('fr', message('error.not_found'))).toBe('Not found')
  })

  it.each([
    [
      'has no English catalogue',
      { 'zh-CN.json': { accepts: ['zh'], messages: { a: 'x' } } },
      /no message catalogue en\.json/,
    ],
    [
      'lacks a text',
      {
        'en.json': { accepts: ['en'], messages: { a: 'A', b: 'B' } },
        'zh-CN.json': { accepts: ['zh'], messages: { a: '甲' } },
      },
      /zh-CN\.json has no text for b/,
    ],
    [
      'has a text English does not have',
      {
        'en.json': { accepts: ['en'], messages: { a: 'A' } },
        'zh-CN.json': { accepts: ['zh'], messages: { a: '甲', c: '丙' } },
      },
      /zh-CN\.json has c, which en\.json does not have/,
    ],
    [
      'uses a placeholder the English text lacks',
      {
        'en.json': { accepts: ['en'], messages: { a: 'at most {max}' } },
        'zh-CN.json': { accepts: ['zh'], messages: { a: '最多 {count}' } },
      },
      /zh-CN\.json uses \{count\} in a/,
    ],
    [
      'accepts a range another catalogue accepts',
      { 'en.json': { accepts: ['en', 'zh'], messages: {} }, 'zh-CN.json': { accepts: ['zh'], messages: {} } },
      /en\.json and zh-CN\.json both accept zh/,
    ],
    [
      'accepts no valid range',
      { 'en.json': { accepts: ['english!'], messages: {} } },
      /en\.json needs "accepts"/,
    ],
    ['is not JSON', { 'en.json': '{"accepts": [' }, /en\.json is not JSON/],
    [
      'is named by no language tag',
      { 'en.json': { accepts: ['en'], messages: {} }, 'Chinese.json': {} },
      /Chinese\.json is not named by a language tag/,
    ],
  ])('refuse a set of catalogues where one %s', async (_case, files, problem) => {
    const dir = join(temp.path, _case.replaceAll(' ', '-'))
    await mkdir(dir)
    for (const [file, content] of Object.entries(files)) {
      await temp.file(
        join(dir.slice(temp.path.length + 1), file),
        typeof content === 'string' ? content : JSON.stringify(content),
      )
    }
    expect(() => readCatalogues(dir)).toThrow(problem)
  })

  it('take a third language as one more file', async () => {
    const dir = join(temp.path, 'third')
    await mkdir(dir)
    for (const file of readdirSync(CATALOGUES_DIR))
      await temp.file(`third/${file}`, readFileSync(join(CATALOGUES_DIR, file), 'utf8'))
    const english = catalogues().get('en')?.messages ?? {}
    const french = Object.fromEntries(Object.entries(english).map(([key, text]) => [key, `(fr) ${text}`]))
    await temp.file('third/fr.json', JSON.stringify({ accepts: ['fr', 'fr-*'], messages: french }))
    const read = readCatalogues(dir)
    expect([...read.keys()]).toEqual(['en', 'fr', 'zh-CN'])
    expect(read.get('fr')?.messages['error.not_found']).toBe('(fr) Not found')
  })
})
