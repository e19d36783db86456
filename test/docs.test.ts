import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * The front page (README.md) and the pages of docs/ stay true to the code: every variable the configuration reads is
 * in docs/configuration.md with its default, every `tessera` command and option is in the operator's pages, and every
 * relative link leads to a file of the repository (and to a heading of it, when it names one).
 */
const ROOT = resolve(import.meta.dirname, '..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs')).flatMap((file) => (file.endsWith('.md') ? [`docs/${file}`] : [])),
]

/** The configuration's sources: src/config.ts and src/config/ (whose dev-secret.ts reads no variable). */
function configSources(): Map<string, string> {
  const files = [
    'src/config.ts',
    ...readdirSync(join(ROOT, 'src/config')).map((file) => `src/config/${file}`),
  ]
  return new Map(files.map((file) => [file, read(file)]))
}

/**
 * Every variable the configuration reads: the first argument of a read of the environment reader (`read.integer('PORT',
 * …)`, `httpsBase(read, 'OAUTH_GITHUB_URL')`), and the per-provider variables, whose names are made from the
 * provider's (`${prefix}_ISSUER`, `required('CLIENT_ID')`), as the page names them: `OAUTH_<NAME>_ISSUER`.
 */
function variablesRead(): Set<string> {
  const names = new Set<string>()
  for (const text of configSources().values()) {
    for (const [, name] of text.matchAll(/\bread\s*\.[a-zA-Z]+\(\s*'([A-Z][A-Z0-9_]*)'/g))
      names.add(name as string)
    for (const [, name] of text.matchAll(/\(\s*read,\s*'([A-Z][A-Z0-9_]*)'/g)) names.add(name as string)
    for (const [, suffix] of text.matchAll(/`\$\{prefix\}_([A-Z][A-Z0-9_]*)`/g))
      names.add(`OAUTH_<NAME>_${suffix}`)
    for (const [, suffix] of text.matchAll(/\brequired\('([A-Z][A-Z0-9_]*)'\)/g))
      names.add(`OAUTH_<NAME>_${suffix}`)
  }
  return names
}

/**
 * The defaults the code writes as a literal: `read.integer('X', 15, …)`, `read.string('X', 'tessera:')`,
 * `read.oneOf('X', [...], 'single')`, `read.countOrAuto('X', 1, …)`. A fallback of 0 or '' stands for "unset" (no
 * metrics port, no prefix) and the page may say so in words; a computed one (`defaultConcurrency`) is not checked.
 */
function literalDefaults(): Map<string, string> {
  const defaults = new Map<string, string>()
  const text = [...configSources().values()].join('\n')
  const patterns = [
    /\bread\s*\.(?:integer|countOrAuto)\(\s*'([A-Z][A-Z0-9_]*)',\s*([0-9][0-9_]*)\s*,/g,
    /\bread\s*\.string\(\s*'([A-Z][A-Z0-9_]*)',\s*'([^']*)'\s*\)/g,
    /\bread\s*\.oneOf\(\s*'([A-Z][A-Z0-9_]*)',\s*(?:\[[^\]]*\]|[A-Z_]+),\s*'([^']*)'\s*\)/g,
  ]
  for (const pattern of patterns) {
    for (const [, name, value] of text.matchAll(pattern)) {
      const shown = (value as string).replaceAll('_', '')
      if (shown === '0' || shown === '') continue
      defaults.set(name as string, shown)
    }
  }
  return defaults
}

/** The rows of docs/configuration.md's tables: the variable of each, with its Default cell. */
function documentedVariables(): Map<string, string> {
  const rows = new Map<string, string>()
  for (const line of read('docs/configuration.md').split('\n')) {
    const cells = line.match(/^\| `([A-Z][A-Z0-9_<>]*)` \| ([^|]*) \|/)
    if (cells === null) continue
    const [, name, defaultCell] = cells
    if (rows.has(name as string)) throw new Error(`docs/configuration.md has two rows for ${name}`)
    rows.set(name as string, (defaultCell as string).trim())
  }
  return rows
}

describe('docs/configuration.md', () => {
  it('finds the variables in the code (the extraction itself works)', () => {
    const names = variablesRead()
    for (const name of [
      'NODE_ENV',
      'PORT',
      'DATABASE_URL',
      'CORS_ORIGINS',
      'OAUTH_GITHUB_URL',
      'OAUTH_<NAME>_CLIENT_ID',
      'OAUTH_<NAME>_ISSUER',
    ]) {
      expect(names).toContain(name)
    }
    expect(names.size).toBeGreaterThan(60)
    expect(literalDefaults().get('AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES')).toBe('15')
    expect(literalDefaults().get('HEALTH_TIMEOUT_MS')).toBe('1000')
  })

  it('has a row, in a table of its own group, for every variable the configuration reads', () => {
    const documented = documentedVariables()
    expect([...variablesRead()].filter((name) => !documented.has(name)).sort()).toEqual([])
  })

  it('has no row for a variable the configuration does not read', () => {
    const names = variablesRead()
    expect([...documentedVariables().keys()].filter((name) => !names.has(name)).sort()).toEqual([])
  })

  it("gives each variable the code's default", () => {
    const documented = documentedVariables()
    const wrong = [...literalDefaults()].flatMap(([name, value]) => {
      const cell = documented.get(name) ?? ''
      return cell.includes(`\`${value}\``)
        ? []
        : [`${name}: the code's default is ${value}, the page says ${cell}`]
    })
    expect(wrong).toEqual([])
  })
})

/** What a source file of src/commands/ defines: the options of each parseCommandLine call (`--name`, `-x`). */
function commandOptions(text: string): string[] {
  const options: string[] = []
  for (const call of text.matchAll(/parseCommandLine\([^,]+,\s*\{([\s\S]*?)\n?\s*\}\s*\)/g)) {
    const body = call[1] as string
    for (const [, name] of body.matchAll(/(?:^|[{,\n])\s*'?([a-z][a-z-]*)'?\s*:\s*\{/g))
      options.push(`--${name}`)
    for (const [, short] of body.matchAll(/short:\s*'([a-z])'/g)) options.push(`-${short}`)
  }
  return options
}

describe('the `tessera` command in docs/operations.md and docs/administration.md', () => {
  const commands = join(ROOT, 'src/commands')
  const operatorPages = read('docs/operations.md') + read('docs/administration.md')

  it('names every command the dispatcher runs', () => {
    const cli = read('src/commands/cli.ts')
    const names = new Set([
      ...[...cli.matchAll(/argv\[0\] === '([a-z-]+)'/g)].map((match) => match[1] as string),
      ...[...cli.matchAll(/case '([a-z-]+)':/g)].map((match) => match[1] as string),
    ])
    expect(names).toContain('serve')
    expect(names).toContain('users')
    expect([...names].filter((name) => !operatorPages.includes(`tessera ${name}`))).toEqual([])
  })

  it('names every subcommand (users list, store backup, keys generate, …)', () => {
    const missing: string[] = []
    let found = 0
    for (const file of readdirSync(commands)) {
      const command = file.replace(/\.ts$/, '')
      const text = readFileSync(join(commands, file), 'utf8')
      const subcommands = [...text.matchAll(/\bsubcommand [!=]== '([a-z-]+)'/g)].map(
        (match) => match[1] as string,
      )
      const verbs = text.match(/const VERBS = \[([^\]]*)\]/)?.[1]
      if (verbs !== undefined)
        subcommands.push(...[...verbs.matchAll(/'([a-z-]+)'/g)].map((match) => match[1] as string))
      for (const subcommand of new Set(subcommands)) {
        if (subcommand === 'help') continue
        found += 1
        if (!operatorPages.includes(`tessera ${command} ${subcommand}`))
          missing.push(`tessera ${command} ${subcommand}`)
      }
    }
    expect(found).toBeGreaterThan(12)
    expect(missing).toEqual([])
  })

  it('names every option of every command', () => {
    const missing = readdirSync(commands).flatMap((file) =>
      commandOptions(readFileSync(join(commands, file), 'utf8')).flatMap((option) =>
        new RegExp(`(^|[\\s\`(\\[])${option}\\b`).test(operatorPages) ? [] : [`${file}: ${option}`],
      ),
    )
    expect(commandOptions(read('src/commands/store.ts'))).toContain('--batch-size')
    expect(missing).toEqual([])
  })
})

/** GitHub's anchor of a heading: lower case, punctuation dropped (`-` and `_` kept), spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors of a Markdown file's headings, repeated ones numbered as GitHub numbers them. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const [, heading] of withoutFences(text).matchAll(/^#{1,6}\s+(.*?)\s*#*$/gm)) {
    const base = slug(heading as string)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

/** The text without its fenced code blocks (indented ones too), where a `#` starts no heading. */
function withoutFences(text: string): string {
  return text.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[^\n]*$/gm, '')
}

/** The text without its fenced code blocks and code spans, where a bracket is no link. */
function withoutCode(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, '')
}

describe('the links of README.md and docs/*.md', () => {
  it.each(PAGES)(
    '%s: every relative link leads to a file of the repository, and to a heading it names',
    (page) => {
      const text = withoutCode(read(page))
      const targets = [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1] as string)
      const broken = targets.flatMap((target) => {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return [] // https:, mailto:
        const [path = '', anchor] = target.split('#')
        const file =
          path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURIComponent(path))
        if (relative(ROOT, file).startsWith(`..${sep}`) || relative(ROOT, file) === '..')
          return [`${target}: outside the repository`]
        if (!existsSync(file)) return [`${target}: no such file`]
        if (anchor === undefined || anchor === '' || !statSync(file).isFile() || !file.endsWith('.md'))
          return []
        return anchors(readFileSync(file, 'utf8')).has(anchor) ? [] : [`${target}: no such heading`]
      })
      expect(broken).toEqual([])
    },
  )

  it('README.md links to every page of docs/', () => {
    const readme = read('README.md')
    expect(PAGES.filter((page) => page !== 'README.md' && !readme.includes(`](${page})`))).toEqual([])
  })

  it('finds the links and anchors (the check itself works)', () => {
    expect(slug('4.25 Second factors (`/auth/mfa`)')).toBe('425-second-factors-authmfa')
    expect(slug('HTTPS, directly or behind a proxy')).toBe('https-directly-or-behind-a-proxy')
    expect(anchors('# A\n```\n# not a heading\n```\n## A\n## The `tessera` command\n')).toEqual(
      new Set(['a', 'a-1', 'the-tessera-command']),
    )
    expect(read('README.md')).toMatch(/\]\(docs\/configuration\.md\)/)
  })
})

describe('README.md, the front page', () => {
  it('gives the commands CI runs: npm install, npm start and npm test', () => {
    const readme = read('README.md')
    expect(readme).toContain('npm install && npm start')
    expect(readme).toMatch(/^npm test\b/m)
  })
})
