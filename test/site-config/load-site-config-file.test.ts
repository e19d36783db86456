import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadSiteConfigFile } from '../../src/site-config/load-site-config-file.js'
import { SiteConfigFileError, SiteConfigInvalidError } from '../../src/site-config/site-config-errors.js'

let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-site-config-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, text)
  return path
}

/** The error loadSiteConfigFile rejects with. */
async function failure(path: string): Promise<Error> {
  const error = await loadSiteConfigFile(path).then(
    () => undefined,
    (reason: unknown) => reason,
  )
  if (!(error instanceof Error)) throw new Error(`expected ${path} to fail`)
  return error
}

describe('loadSiteConfigFile: formats', () => {
  it('reads a .json file', async () => {
    const path = await file('site.json', '{ "toc": { "maxLevel": 3 }, "theme": "dark" }\n')
    expect(await loadSiteConfigFile(path)).toEqual({ toc: { maxLevel: 3 }, theme: 'dark' })
  })

  it('reads a .json file that starts with a byte order mark', async () => {
    const path = await file('bom.json', '\uFEFF{ "feed": { "limit": 5 } }')
    expect(await loadSiteConfigFile(path)).toEqual({ feed: { limit: 5 } })
  })

  it.each(['site.yaml', 'site.yml', 'SITE.YAML'])('reads a YAML file named %s', async (name) => {
    const path = await file(name, 'toc:\n  maxLevel: 3\nsitemap:\n  exclude: [/a/, /b/]\n')
    expect(await loadSiteConfigFile(path)).toEqual({
      toc: { maxLevel: 3 },
      sitemap: { exclude: ['/a/', '/b/'] },
    })
  })

  it('reads YAML 1.2: "yes" is a string, not a boolean', async () => {
    const error = await failure(await file('yes.yaml', 'sidebar:\n  enabled: yes\n'))
    expect(error).toBeInstanceOf(SiteConfigInvalidError)
    expect((error as SiteConfigInvalidError).errors).toEqual([
      { pointer: '/sidebar/enabled', message: '/sidebar/enabled must be a boolean, got "yes"' },
    ])
  })

  it('reads a file of another extension as JSON when it is JSON', async () => {
    const path = await file('site.conf', '{ "toc": { "title": "Contents" } }')
    expect(await loadSiteConfigFile(path)).toEqual({ toc: { title: 'Contents' } })
  })

  it('reads a file of another extension as YAML when it is not JSON', async () => {
    const path = await file('site-config', 'toc:\n  title: Contents\n')
    expect(await loadSiteConfigFile(path)).toEqual({ toc: { title: 'Contents' } })
  })
})

describe('loadSiteConfigFile: files that cannot be read or parsed', () => {
  it('rejects a missing file', async () => {
    const path = join(dir, 'missing.json')
    const error = await failure(path)
    expect(error).toBeInstanceOf(SiteConfigFileError)
    expect(error.message).toBe(`${path}: cannot read the file: no such file`)
  })

  it('rejects a directory', async () => {
    const error = await failure(dir)
    expect(error).toBeInstanceOf(SiteConfigFileError)
    expect(error.message).toBe(`${dir}: cannot read the file: it is a directory`)
  })

  it('rejects invalid JSON with its line and column', async () => {
    const path = await file('broken.json', '{\n  "toc": {\n    "maxLevel": 3,\n  }\n}\n')
    const error = await failure(path)
    expect(error).toBeInstanceOf(SiteConfigFileError)
    expect(error.message).toBe(
      `${path}: invalid JSON at line 4, column 3: expected a property name in double quotes, found '}'`,
    )
    expect(error).toMatchObject({ path, line: 4, column: 3 })
  })

  it('counts columns in characters, not bytes or UTF-16 units', async () => {
    const path = await file('wide.json', '{ "footer": { "copyright": "例😀" x } }')
    expect((await failure(path)).message).toBe(
      `${path}: invalid JSON at line 1, column 33: expected ',' or '}' after the property value, found 'x'`,
    )
  })

  it('rejects an empty JSON file', async () => {
    const path = await file('empty.json', '')
    expect((await failure(path)).message).toBe(
      `${path}: invalid JSON at line 1, column 1: unexpected end of input`,
    )
  })

  it('rejects invalid YAML with its line and column', async () => {
    const path = await file('broken.yaml', 'toc:\n  maxLevel: 3\n  title: a: b\n')
    const error = await failure(path)
    expect(error).toBeInstanceOf(SiteConfigFileError)
    expect(error.message).toBe(
      `${path}: invalid YAML at line 3, column 10: nested mappings are not allowed in compact mappings`,
    )
    expect(error).toMatchObject({ line: 3, column: 10 })
  })

  it('rejects YAML with a duplicate key', async () => {
    const path = await file('duplicate.yml', 'toc:\n  maxLevel: 3\n  maxLevel: 4\n')
    expect((await failure(path)).message).toBe(
      `${path}: invalid YAML at line 3, column 3: map keys must be unique`,
    )
  })

  it('rejects YAML with more than one document', async () => {
    const path = await file('two.yaml', 'toc: {}\n---\nfeed: {}\n')
    expect((await failure(path)).message.replace(path, '<file>')).toMatch(
      /^<file>: invalid YAML at line 2, column 1: source contains multiple documents/,
    )
  })

  it('reports the YAML error for a file of another extension that is neither', async () => {
    const path = await file('site.txt', '{ "toc": [ }')
    expect((await failure(path)).message.replace(path, '<file>')).toMatch(
      /^<file>: invalid YAML at line 1, column \d+: /,
    )
  })
})

describe('loadSiteConfigFile: content that breaks the schema', () => {
  it('rejects it with every error, one line each', async () => {
    const path = await file('invalid.yaml', 'toc:\n  maxLevel: 7\nsitemap:\n  changefreq: sometimes\n')
    const error = await failure(path)
    expect(error).toBeInstanceOf(SiteConfigInvalidError)
    expect((error as SiteConfigInvalidError).errors.map((e) => e.pointer)).toEqual([
      '/toc/maxLevel',
      '/sitemap/changefreq',
    ])
    expect(error.message).toBe(
      [
        `${path}: /toc/maxLevel must be an integer from 1 to 6, got 7`,
        `${path}: /sitemap/changefreq must be one of always, hourly, daily, weekly, monthly, yearly, never, got "sometimes"`,
      ].join('\n'),
    )
  })

  it('rejects an empty YAML file, which is null rather than an object', async () => {
    const path = await file('empty.yaml', '# nothing yet\n')
    expect((await failure(path)).message).toBe(`${path}: The site configuration must be an object, got null`)
  })
})
