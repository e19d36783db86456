// Writes schemas/site-config.schema.json from the TypeBox definition in src/site-config/site-config-schema.ts,
// the single source of the schema (test/site-config/site-config-schema.test.ts fails while the two differ).
// Run after a build: npm run build && node scripts/generate-site-config-schema.mjs
import { writeFile } from 'node:fs/promises'
import { siteConfigSchemaDocument } from '../dist/site-config/site-config-schema.js'

const target = new URL('../schemas/site-config.schema.json', import.meta.url)
await writeFile(target, `${format(siteConfigSchemaDocument(), '')}\n`)
process.stdout.write(`wrote ${target.pathname}\n`)

/**
 * JSON with two-space indentation and arrays of scalars on one line, the layout `biome format` gives.
 * @param {unknown} value
 * @param {string} indent
 * @returns {string}
 */
function format(value, indent) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const inner = `${indent}  `
  if (Array.isArray(value)) {
    if (value.every((item) => item === null || typeof item !== 'object')) {
      return `[${value.map((item) => JSON.stringify(item)).join(', ')}]`
    }
    return `[\n${value.map((item) => inner + format(item, inner)).join(',\n')}\n${indent}]`
  }
  const entries = Object.entries(value).map(
    ([key, item]) => `${inner}${JSON.stringify(key)}: ${format(item, inner)}`,
  )
  return entries.length === 0 ? '{}' : `{\n${entries.join(',\n')}\n${indent}}`
}
