import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main } from '../../src/commands/cli.js'

/** Runs the command with stdout and stderr captured (observed, not written). */
async function run(argv: string[]): Promise<{ stdout: string; stderr: string; exitCode: unknown }> {
  let stdout = ''
  let stderr = ''
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk)
    return true
  })
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk)
    return true
  })
  try {
    await main(argv)
  } finally {
    vi.restoreAllMocks()
  }
  return { stdout, stderr, exitCode: process.exitCode }
}

/** Every variable the configuration reads (src/config.ts and src/config/). */
function configVariables(): Set<string> {
  const dir = join(import.meta.dirname, '../../src')
  const files = ['config.ts', ...readdirSync(join(dir, 'config')).map((file) => join('config', file))]
  return new Set(
    files.flatMap((file) =>
      [...readFileSync(join(dir, file), 'utf8').matchAll(/'([A-Z][A-Z0-9_]+)'/g)].flatMap(
        (match) => match[1] ?? [],
      ),
    ),
  )
}

afterEach(() => {
  process.exitCode = undefined
})

describe('tessera --help', () => {
  it('names the commands, the options and the main variables, one line each, and points to docs/configuration.md', async () => {
    const { stdout, stderr, exitCode } = await run(['--help'])
    expect(stderr).toBe('')
    expect(exitCode).toBeUndefined()
    expect(stdout).toMatch(/^Usage: tessera <command> \[options\]\n/)
    for (const command of ['serve', 'migrate', 'site-config validate <f>', 'keys generate', 'help']) {
      expect(stdout).toContain(`\n  ${command} `)
    }
    for (const variables of [
      'NODE_ENV',
      'HOST, PORT',
      'DATABASE_URL',
      'REDIS_URL',
      'AUTH_JWT_SECRET',
      'CORS_ORIGINS',
      'WORKERS',
      'LOG_LEVEL',
      'SITE_CONFIG_FILE',
    ]) {
      expect(stdout).toMatch(new RegExp(`\\n  ${variables} +\\S[^\\n]*\\n`))
    }
    expect(stdout.endsWith('\nSee docs/configuration.md for every variable.\n')).toBe(true)
  })

  it('names only variables the configuration reads', async () => {
    const { stdout } = await run(['--help'])
    const named = stdout.match(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b(?:HOST|PORT|WORKERS)\b/g) ?? []
    const known = configVariables()
    expect(named.length).toBeGreaterThan(8)
    expect(named.filter((name) => !known.has(name))).toEqual([])
  })

  it('is also `tessera help`, `tessera -h` and `tessera` alone', async () => {
    const { stdout } = await run(['--help'])
    for (const argv of [['help'], ['-h'], []]) {
      expect((await run(argv)).stdout).toBe(stdout)
    }
  })

  it('an unknown option is a usage error: exit code 2, the usage on stderr', async () => {
    const { stdout: usage } = await run(['--help'])
    const { stdout, stderr, exitCode } = await run(['--nope'])
    expect(stdout).toBe('')
    expect(exitCode).toBe(2)
    expect(stderr.startsWith("tessera: Unknown option '--nope'.")).toBe(true)
    expect(stderr.endsWith(usage)).toBe(true)
  })
})

describe('raw control bytes in CLI errors', () => {
  const hostile = `\u001b[2J\u001b[31mred\nforged line\u202e${'x'.repeat(100_000)}`
  /** The first line of stderr, and whether the whole of it holds a control byte other than its line ends. */
  const check = (stderr: string) => {
    const [first = ''] = stderr.split('\n')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the bytes this test looks for
    expect(stderr.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/)
    expect(first.length).toBeLessThan(600)
    expect(first).not.toContain('forged line\n')
    return first
  }

  it.each([
    [['serve', hostile]],
    [[`--${hostile}`]],
    [['users', 'show', hostile]],
    [['users', 'list', `--${hostile}`]],
    [['audit', '--user', hostile]],
    [['audit', '--user', 'a@example.com', '--since', hostile]],
    [['store', hostile]],
    [['store', 'backup', 'a.db', hostile]],
    [['site-config', 'validate', 'a.json', hostile]],
    [['keys', hostile]],
    [['keys', 'generate', '--algorithm', hostile]],
  ])('every command escapes and cuts a hostile argument: %#', async (argv) => {
    const result = await run(argv)
    expect(result.exitCode).toBe(2)
    expect(check(result.stderr)).toContain('\\x1b[2J\\x1b[31mred\\nforged line')
  })

  it('a site configuration file whose name is hostile is named escaped', async () => {
    const result = await run(['site-config', 'validate', `/nonexistent/${hostile}.json`])
    expect(result.exitCode).toBe(2)
    expect(check(result.stderr)).toContain('\\x1b[2J\\x1b[31mred\\nforged line')
  })

  it('--limit -1 is refused for its value, not as an ambiguous argument', async () => {
    for (const argv of [
      ['audit', '--user', 'a@example.com', '--limit', '-1'],
      ['users', 'list', '--limit', '-1'],
    ]) {
      const result = await run(argv)
      expect(result.exitCode).toBe(2)
      expect(result.stderr.split('\n')[0]).toMatch(/^tessera (audit|users): --limit .* got "-1"$/)
    }
  })
})
