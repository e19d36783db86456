import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadSiteConfigFile } from '../../src/site-config/load-site-config-file.js'
import { SiteConfigFileError, SiteConfigInvalidError } from '../../src/site-config/site-config-errors.js'
import { useTempDir } from '../support/temp-dir.js'

const dir = useTempDir('site-config')

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
    const path = await dir.file('site.json', '{ "toc": { "maxLevel": 3 }, "theme": "dark" }\n')
    expect(await loadSiteConfigFile(path)).toEqual({ toc: { maxLevel: 3 }, theme: 'dark' })
  })

  it('reads a .json file that starts with a byte order mark', async () => {
    const path = await dir.file('bom.json', '\uFEFF{ "feed": { "limit": 5 } }')
    expect(await loadSiteConfigFile(path)).toEqual({ feed: { limit: 5 } })
  })

  it.each(['site.yaml', 'site.yml', 'SITE.YAML'])('reads a YAML file named %s', async (name) => {
    const path = await dir.file(name, 'toc:\n  maxLevel: 3\nsitemap:\n  exclude: [/a/, /b/]\n')
    expect(await loadSiteConfigFile(path)).toEqual({
      toc: { maxLevel: 3 },
      sitemap: { exclude: ['/a/', '/b/'] },
    })
  })

  it('reads YAML 1.2: "yes" is a string, not a boolean', async () => {
    const error = await failure(await dir.file('yes.yaml', 'sidebar:\n  enabled: yes\n'))
    expect(error).toBeInstanceOf(SiteConfigInvalidError)
    expect((error as SiteConfigInvalidError).errors).toEqual([
      { pointer: '/sidebar/enabled', message: '/sidebar/enabled must be a boolean, got "yes"' },
    ])
  })

  it('reads a file of another extension as JSON when it is JSON', async () => {
    const path = await dir.file('site.conf', '{ "toc": { "title": "Contents" } }')
    expect(await loadSiteConfigFile(path)).toEqual({ toc: { title: 'Contents' } })
  })

  it('reads a file of another extension as YAML when it is not JSON', async () => {
    const path = await dir.file('site-config', 'toc:\n  title: Contents\n')
    expect(await loadSiteConfigFile(path)).toEqual({ toc: { title: 'Contents' } })
  })
})

describe('loadSiteConfigFile: files that cannot be read or parsed', () => {
  it('rejects a missing file', async () => {
    const path = join(dir.path, 'missing.json')
    const error = await failure(path)
    expect(error).toBeInstanceOf(SiteConfigFileError)
    expect(error.message).toBe(`${path}: cannot read the file: no such file`)
  })

  it('rejects a directory', async () => {
    const error = await failure(dir.path)
    expect(error).toBeInstanceOf(SiteConfigFileError)
    expect(error.message).toBe(`${dir.path}: cannot read the file: it is a directory`)
  })

  it('rejects invalid JSON with its line and column', async () => {
    const path = await dir.file('broken.json', '{\n  "toc": {\n    "maxLevel": 3,\n  }\n}\n')
    const error = await failure(path)
    expect(error).toBeInstanceOf(SiteConfigFileError)
    expect(error.message).toBe(
      `${path}: invalid JSON at line 4, column 3: expected a property name in double quotes, found '}'`,
    )
    expect(error).toMatchObject({ path, line: 4, column: 3 })
  })

  it('counts columns in characters, not bytes or UTF-16 units', async () => {
    const path = await dir.file('wide.json', '{ "footer": { "copyright": "例😀" x } }')
    expect((await failure(path)).message).toBe(
      `${path}: invalid JSON at line 1, column 33: expected ',' or '}' after the property value, found 'x'`,
    )
  })

  it('rejects an empty JSON file', async () => {
    const path = await dir.file('empty.json', '')
    expect((await failure(path)).message).toBe(
      `${path}: invalid JSON at line 1, column 1: unexpected end of input`,
    )
  })

  it('rejects invalid YAML with its line and column', async () => {
    const path = await dir.file('broken.yaml', 'toc:\n  maxLevel: 3\n  title: a: b\n')
    const error = await failure(path)
    expect(error).toBeInstanceOf(SiteConfigFileError)
    expect(error.message).toBe(
      `${path}: invalid YAML at line 3, column 10: nested mappings are not allowed in compact mappings`,
    )
    expect(error).toMatchObject({ line: 3, column: 10 })
  })

  it('rejects YAML with a duplicate key', async () => {
    const path = await dir.file('duplicate.yml', 'toc:\n  maxLevel: 3\n  maxLevel: 4\n')
    expect((await failure(path)).message).toBe(
      `${path}: invalid YAML at line 3, column 3: map keys must be unique`,
    )
  })

  it('rejects YAML with more than one document', async () => {
    const path = await dir.file('two.yaml', 'toc: {}\n---\nfeed: {}\n')
    expect((await failure(path)).message.replace(path, '<file>')).toMatch(
      /^<file>: invalid YAML at line 2, column 1: source contains multiple documents/,
    )
  })

  it('reports the YAML error for a file of another extension that is neither', async () => {
    const path = await dir.file('site.txt', '{ "toc": [ }')
    expect((await failure(path)).message.replace(path, '<file>')).toMatch(
      /^<file>: invalid YAML at line 1, column \d+: /,
    )
  })
})

describe('loadSiteConfigFile: content that breaks the schema', () => {
  it('rejects it with every error, one line each', async () => {
    const path = await dir.file('invalid.yaml', 'toc:\n  maxLevel: 7\nsitemap:\n  changefreq: sometimes\n')
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
    const path = await dir.file('empty.yaml', '# nothing yet\n')
    expect((await failure(path)).message).toBe(`${path}: The site configuration must be an object, got null`)
  })
})
