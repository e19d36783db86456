import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runSiteConfigCommand, SITE_CONFIG_USAGE } from '../../src/commands/site-config.js'
import { useTempDir } from '../support/temp-dir.js'

const dir = useTempDir('site-config-cli')

/** Runs `tessera site-config <args>` and collects what it writes. */
async function run(...args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await runSiteConfigCommand(args, {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
  })
  return { code, stdout, stderr }
}

describe('tessera site-config validate: exit code 0, valid', () => {
  it('accepts a valid JSON file', async () => {
    const path = await dir.file('site.json', JSON.stringify({ toc: { maxLevel: 3 }, feed: { limit: 10 } }))
    expect(await run('validate', path)).toEqual({ code: 0, stdout: 'valid\n', stderr: '' })
  })

  it('accepts a valid YAML file', async () => {
    const path = await dir.file(
      'site.yaml',
      'sitemap:\n  changefreq: weekly\n  priority: 0.8\n  exclude:\n    - /drafts/\n',
    )
    expect(await run('validate', path)).toEqual({ code: 0, stdout: 'valid\n', stderr: '' })
  })
})

describe('tessera site-config validate: exit code 1, invalid', () => {
  it('prints one line per error', async () => {
    const path = await dir.file(
      'invalid.json',
      JSON.stringify({ toc: { maxLevel: 7 }, feed: { limit: 0, title: 3 } }),
    )
    expect(await run('validate', path)).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `${path}: /toc/maxLevel must be an integer from 1 to 6, got 7\n` +
        `${path}: /feed/title must be a string, got 3\n` +
        `${path}: /feed/limit must be an integer of at least 1, got 0\n`,
    })
  })
})

describe('tessera site-config validate: exit code 2, unreadable or unparsable', () => {
  it('reports a missing file', async () => {
    const path = join(dir.path, 'missing.yaml')
    expect(await run('validate', path)).toEqual({
      code: 2,
      stdout: '',
      stderr: `${path}: cannot read the file: no such file\n`,
    })
  })

  it('reports a JSON parse error with line and column', async () => {
    const path = await dir.file('broken.json', '{\n  "toc": { "maxLevel": 3 }\n  "feed": {}\n}\n')
    expect(await run('validate', path)).toEqual({
      code: 2,
      stdout: '',
      stderr: `${path}: invalid JSON at line 3, column 3: expected ',' or '}' after the property value, found '"'\n`,
    })
  })

  it('reports a YAML parse error with line and column', async () => {
    const path = await dir.file('broken.yml', 'toc:\n  maxLevel: 3\n\tfeed: {}\n')
    const result = await run('validate', path)
    expect(result).toMatchObject({ code: 2, stdout: '' })
    expect(result.stderr.replace(path, '<file>')).toMatch(/^<file>: invalid YAML at line 3, column 1: .+\n$/)
  })
})

describe('tessera site-config: exit code 2, usage errors', () => {
  it.each([
    [[], 'missing subcommand'],
    [['check', 'site.json'], 'unknown subcommand "check"'],
    [['validate'], 'validate needs a <file> argument'],
    [['validate', 'a.json', 'b.json'], 'unexpected argument "b.json"'],
  ])('rejects %j: %s', async (args, message) => {
    expect(await run(...args)).toEqual({
      code: 2,
      stdout: '',
      stderr: `tessera site-config: ${message}\n${SITE_CONFIG_USAGE}`,
    })
  })

  it('rejects an unknown option', async () => {
    const result = await run('validate', '--strict', 'site.json')
    expect(result).toMatchObject({ code: 2, stdout: '' })
    expect(result.stderr).toMatch(/^tessera site-config: Unknown option '--strict'/)
  })

  it.each([[['--help']], [['-h']], [['help']], [['validate', '--help']]])(
    'prints the usage for %j',
    async (args) => {
      expect(await run(...args)).toEqual({ code: 0, stdout: SITE_CONFIG_USAGE, stderr: '' })
    },
  )
})
