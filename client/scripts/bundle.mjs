// Joins the modules tsc emitted into dist/ into one dist/index.js: plain ESM without imports, which a browser loads
// as it is (the demo page serves this file) and which needs no bundler, so `npm ci --omit=dev` can build it with
// typescript alone. The modules only declare at top level (no module-level state), so joining them in dependency
// order and keeping index.js's exports gives the same program. The .d.ts files stay as tsc wrote them.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

// the directory tsc wrote to: dist/ by default, another one for the size test (which must not touch dist/)
const dist = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist')
const importPattern = /^import\s+(?:[\s\S]*?\s+from\s+)?'\.\/([\w-]+)\.js';?\n/gm
const exportFromPattern = /^export\s+(?:\{([\s\S]*?)\}|\*)\s+from\s+'\.\/([\w-]+)\.js';?\n/gm

const sources = new Map()
for (const file of readdirSync(dist)) {
  if (file.endsWith('.js')) sources.set(file.slice(0, -3), readFileSync(join(dist, file), 'utf8'))
}

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
visit('index', [])

const exported = []
const bodies = ordered.map((name) => {
  let body = sources
    .get(name)
    .replace(importPattern, '')
    .replace(/^\/\/# sourceMappingURL=.*\n?/gm, '')
  if (name === 'index') {
    body = body.replace(exportFromPattern, (_, names) => {
      if (names === undefined) throw new Error('index.ts must name what it re-exports (no export *)')
      exported.push(
        ...names
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean),
      )
      return ''
    })
    if (/^\s*(import|export)\b/m.test(body)) throw new Error('index.ts may only re-export named values')
  } else {
    body = body.replace(/^export\s+(?=(?:async\s+)?(?:function|class|const|let))/gm, '')
    if (/^\s*export\b/m.test(body))
      throw new Error(`${name}.ts: only "export function|class|const" is supported`)
  }
  return body.trim()
})

for (const name of ordered) if (name !== 'index') rmSync(join(dist, `${name}.js`))
writeFileSync(
  join(dist, 'index.js'),
  `${bodies.filter(Boolean).join('\n\n')}\n\nexport { ${exported.join(', ')} }\n`,
)
