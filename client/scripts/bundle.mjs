// Joins the modules tsc emitted into dist/ into one file per entry point: dist/index.js (the core) and
// dist/passkeys.js (`@tessera/client/passkeys`), each plain ESM without imports, which a browser loads as it is (the
// demo page serves both) and which needs no bundler, so `npm ci --omit=dev` can build them with typescript alone. The
// modules only declare at top level (no module-level state), so joining them in dependency order and keeping the
// entry's exports gives the same program. The .d.ts files stay as tsc wrote them; every other .js is removed.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The entry points, as package.json's `exports` name them: `.` and `./passkeys`. */
const ENTRIES = ['index', 'passkeys']

// the directory tsc wrote to: dist/ by default, another one for the size test (which must not touch dist/)
const dist = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist')
const importPattern = /^import\s+(?:[\s\S]*?\s+from\s+)?'\.\/([\w-]+)\.js';?\n/gm
const exportFromPattern = /^export\s+(?:\{([\s\S]*?)\}|\*)\s+from\s+'\.\/([\w-]+)\.js';?\n/gm
const declarationExport = /^export\s+(?=(?:async\s+)?(?:function|class|const|let))/gm

const sources = new Map()
for (const file of readdirSync(dist)) {
  if (file.endsWith('.js')) sources.set(file.slice(0, -3), readFileSync(join(dist, file), 'utf8'))
}

/** The entry `entry` and the modules it imports, joined: its own exports and re-exports are the file's. */
function bundle(entry) {
  const ordered = []
  const visit = (name, trail) => {
    if (ordered.includes(name)) return
    if (trail.includes(name)) throw new Error(`import cycle: ${[...trail, name].join(' -> ')}`)
    const source = sources.get(name)
    if (source === undefined) throw new Error(`no module ${name}.js in dist/`)
    for (const [, dependency] of source.matchAll(importPattern)) visit(dependency, [...trail, name])
    for (const [, , dependency] of source.matchAll(exportFromPattern)) visit(dependency, [...trail, name])
    ordered.push(name)
  }
  visit(entry, [])

  const exported = []
  const bodies = ordered.map((name) => {
    let body = sources
      .get(name)
      .replace(importPattern, '')
      .replace(/^\/\/# sourceMappingURL=.*\n?/gm, '')
    if (name === entry) {
      body = body.replace(exportFromPattern, (_, names) => {
        if (names === undefined) throw new Error(`${entry}.ts must name what it re-exports (no export *)`)
        exported.push(
          ...names
            .split(',')
            .map((n) => n.trim())
            .filter(Boolean),
        )
        return ''
      })
      if (/^\s*(import|export)\b/m.test(body.replace(declarationExport, '')))
        throw new Error(`${entry}.ts may only re-export named values and export its own declarations`)
    } else {
      body = body.replace(declarationExport, '')
      if (/^\s*export\b/m.test(body))
        throw new Error(`${name}.ts: only "export function|class|const" is supported`)
    }
    return body.trim()
  })
  const reexports = exported.length > 0 ? `\n\nexport { ${exported.join(', ')} }` : ''
  return `${bodies.filter(Boolean).join('\n\n')}${reexports}\n`
}

const bundles = ENTRIES.map((entry) => [entry, bundle(entry)])
for (const name of sources.keys()) if (!ENTRIES.includes(name)) rmSync(join(dist, `${name}.js`))
for (const [entry, source] of bundles) writeFileSync(join(dist, `${entry}.js`), source)
