import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * The layers of src/, lowest first. A module may import modules of its own layer or a lower one, never one above
 * (docs/development.md "How the code is laid out"). A folder's modules share its layer; a file at the root of src/ has its own.
 */
const LAYERS: ReadonlyArray<{ name: string; modules: readonly string[] }> = [
  {
    name: 'foundation',
    modules: [
      'clock.ts',
      'time.ts',
      'errors.ts',
      'printable.ts',
      'security-event.ts',
      'code-purpose.ts',
      'client-network.ts',
      'app-info.ts',
      'package-root.ts',
      'language/',
      'sealed-text.ts',
      'role-name.ts',
      'memoize-success.ts',
      'batched-reads.ts',
    ],
  },
  { name: 'configuration', modules: ['config.ts', 'config/', 'logger.ts', 'site-config/'] },
  { name: 'storage', modules: ['storage/'] },
  {
    name: 'domain',
    modules: [
      'auth/',
      'audit/',
      'sessions/',
      'delivery/',
      'mail/',
      'webhooks/',
      'profile/',
      'avatars/',
      'providers/',
      'mfa/',
      'admin/',
    ],
  },
  { name: 'http', modules: ['http/'] },
  { name: 'edges', modules: ['routes/', 'metrics/', 'verifier/'] },
  { name: 'composition', modules: ['app.ts', 'server.ts', 'cluster.ts'] },
  { name: 'commands', modules: ['commands/'] },
  // the package's public surface: what another program can embed, the site-config command among it
  { name: 'package', modules: ['index.ts'] },
]

/** The folders the issue names, and what none of their modules may import (a narrower statement of the above). */
const FORBIDDEN: Readonly<Record<string, readonly string[]>> = {
  'storage/': ['auth/', 'audit/', 'http/', 'routes/', 'commands/'],
  'auth/': ['http/', 'routes/', 'commands/'],
  'sessions/': ['http/', 'routes/', 'commands/'],
  'mail/': ['http/', 'routes/', 'commands/'],
  'delivery/': ['auth/', 'mail/', 'webhooks/', 'http/', 'routes/', 'commands/'],
  'webhooks/': ['mail/', 'http/', 'routes/', 'commands/'],
  'profile/': ['http/', 'routes/', 'commands/'],
  'avatars/': ['http/', 'routes/', 'commands/'],
  'providers/': ['http/', 'routes/', 'commands/'],
  'mfa/': ['http/', 'routes/', 'commands/'],
  'admin/': ['http/', 'routes/', 'commands/'],
  'audit/': ['commands/'],
  'config/': ['commands/'],
}

const SRC = resolve(import.meta.dirname, '../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** Every relative module a source file imports: static imports and re-exports (type-only too), and import(). */
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*'(\.{1,2}\/[^']+)'|\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(IMPORT)].map((match) => {
    const target = resolve(dirname(file), match[1] ?? match[2] ?? '')
    // the sources are TypeScript, imported by the name of the emitted .js; a few are JavaScript already
    const ts = target.replace(/\.js$/, '.ts')
    return files.includes(ts) ? ts : target
  })
}

const files = sourceFiles(SRC)
const graph = new Map(files.map((file) => [file, importsOf(file)]))
const name = (file: string) => relative(SRC, file)

function layerOf(file: string): number {
  const path = name(file)
  const index = LAYERS.findIndex((layer) =>
    layer.modules.some((module) => (module.endsWith('/') ? path.startsWith(module) : path === module)),
  )
  if (index === -1) throw new Error(`${path} belongs to no layer: add it to LAYERS`)
  return index
}

/** The import circles: the strongly connected components of more than one module (Tarjan), or a self-import. */
function circles(): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string) => {
    index.set(file, counter)
    low.set(file, counter)
    counter++
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0))
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = []
      let member: string | undefined
      do {
        member = stack.pop()
        if (member === undefined) break
        onStack.delete(member)
        component.push(name(member))
      } while (member !== file)
      if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component.sort())
    }
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

describe('the imports of src/', () => {
  it('every import names a module of src/ that exists', () => {
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => !graph.has(target)).map((target) => `${name(file)} -> ${name(target)}`),
    )
    expect(missing).toEqual([])
  })

  it('has no import circle', () => {
    expect(circles()).toEqual([])
  })

  it('no module imports a module of a layer above its own', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => graph.has(target) && layerOf(target) > layerOf(file))
        .map(
          (target) =>
            `${name(file)} (${LAYERS[layerOf(file)]?.name}) -> ${name(target)} (${LAYERS[layerOf(target)]?.name})`,
        ),
    )
    expect(upward).toEqual([])
  })

  it('storage/ imports nothing of auth/, audit/, http/, routes/ or commands/; auth/ nothing of http/, routes/ or commands/', () => {
    const crossings = [...graph].flatMap(([file, targets]) => {
      const from = Object.keys(FORBIDDEN).find((folder) => name(file).startsWith(folder))
      if (from === undefined) return []
      return targets
        .filter((target) => FORBIDDEN[from]?.some((folder) => name(target).startsWith(folder)))
        .map((target) => `${name(file)} -> ${name(target)}`)
    })
    expect(crossings).toEqual([])
  })

  it('sees the imports it checks: the dispatcher loads each command, and a circle or an upward import is found', () => {
    const dispatcher = graph.get(join(SRC, 'commands/cli.ts')) ?? []
    expect(dispatcher.map(name)).toEqual(expect.arrayContaining(['commands/serve.ts', 'commands/users.ts']))
    // the checks themselves, on a made-up pair of modules
    const a = join(SRC, 'storage/a.ts')
    const b = join(SRC, 'commands/b.ts')
    graph.set(a, [b])
    graph.set(b, [a])
    try {
      expect(circles()).toContainEqual(['commands/b.ts', 'storage/a.ts'])
      expect(layerOf(b)).toBeGreaterThan(layerOf(a))
    } finally {
      graph.delete(a)
      graph.delete(b)
    }
  })
})
