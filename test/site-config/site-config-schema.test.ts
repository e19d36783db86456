import { readFile } from 'node:fs/promises'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { describe, expect, it } from 'vitest'
import {
  SITE_CONFIG_SCHEMA_ID,
  SITEMAP_CHANGEFREQS,
  siteConfigSchemaDocument,
} from '../../src/site-config/site-config-schema.js'

const COMMITTED = new URL('../../schemas/site-config.schema.json', import.meta.url)
const REFERENCE = new URL('../../docs/site-config.md', import.meta.url)

/** Field paths as the reference writes them: `toc.maxLevel`, and `_collapseControl_.enabled` inside a definition. */
function fieldPaths(schema: Record<string, unknown>, prefix = ''): string[] {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
  return Object.entries(properties).flatMap(([name, child]) => {
    const path = `${prefix}${name}`
    return [path, ...(child.$ref ? [] : fieldPaths(child, `${path}.`))]
  })
}

/** Every schema node in the document, with its JSON Pointer. */
function* nodes(node: unknown, pointer = ''): Generator<[string, Record<string, unknown>]> {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return
  yield [pointer, node as Record<string, unknown>]
  for (const [key, child] of Object.entries(node)) {
    if (key === 'enum') continue
    for (const [name, grandchild] of Object.entries(child ?? {})) {
      if (key === 'properties' || key === '$defs') yield* nodes(grandchild, `${pointer}/${key}/${name}`)
    }
    if (key === 'items') yield* nodes(child, `${pointer}/items`)
  }
}

describe('the site configuration schema (spec 2.6)', () => {
  const document = siteConfigSchemaDocument()

  it('is a JSON Schema 2020-12 document with an $id', () => {
    expect(document.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(document.$id).toBe(SITE_CONFIG_SCHEMA_ID)
  })

  it('is valid against the 2020-12 meta-schema', () => {
    const ajv = new Ajv2020({ strict: true })
    expect(ajv.validateSchema(document), JSON.stringify(ajv.errors)).toBe(true)
  })

  it('compiles under Ajv 2020-12 in strict mode', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true })
    expect(() => ajv.compile(document)).not.toThrow()
  })

  it('matches the committed schemas/site-config.schema.json (regenerate with scripts/generate-site-config-schema.mjs)', async () => {
    const committed = JSON.parse(await readFile(COMMITTED, 'utf8'))
    expect(committed).toEqual(document)
  })

  it('lets every object at every level accept additional properties', () => {
    const objects = [...nodes(document)].filter(([, node]) => node.type === 'object')
    expect(objects.map(([pointer]) => pointer)).toEqual([
      '',
      '/properties/breadcrumb',
      '/properties/reading',
      '/properties/reading/properties/fullscreen',
      '/properties/sidebar',
      '/properties/toc',
      '/properties/footer',
      '/properties/sitemap',
      '/properties/feed',
      '/$defs/collapseControl',
      '/$defs/footerLink',
    ])
    for (const [pointer, node] of objects) {
      expect(node.additionalProperties, pointer).toBeUndefined()
      expect(node.unevaluatedProperties, pointer).toBeUndefined()
    }
  })

  it('requires no field at any level', () => {
    for (const [pointer, node] of nodes(document)) expect(node.required ?? [], pointer).toEqual([])
  })

  it('defines collapseControl and footerLink once under $defs and refers to them', () => {
    const refs = [...nodes(document)].filter(([, node]) => '$ref' in node)
    expect(refs.map(([pointer, node]) => [pointer, node.$ref])).toEqual([
      ['/properties/sidebar/properties/collapseControl', '#/$defs/collapseControl'],
      ['/properties/toc/properties/collapseControl', '#/$defs/collapseControl'],
      ['/properties/footer/properties/beian', '#/$defs/footerLink'],
      ['/properties/footer/properties/policeBeian', '#/$defs/footerLink'],
    ])
    expect(Object.keys(document.$defs as object)).toEqual(['collapseControl', 'footerLink'])
  })

  it('has the constraints of the spec table', () => {
    const field = (path: string) => Object.fromEntries(nodes(document))[path]
    expect(field('/properties/toc/properties/maxLevel')).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 6,
    })
    expect(field('/properties/sitemap/properties/priority')).toMatchObject({
      type: 'number',
      minimum: 0,
      maximum: 1,
    })
    expect(field('/properties/sitemap/properties/changefreq')).toMatchObject({
      type: 'string',
      enum: ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'],
    })
    expect(SITEMAP_CHANGEFREQS).toEqual(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'])
    expect(field('/properties/sitemap/properties/exclude')).toMatchObject({
      type: 'array',
      items: { type: 'string' },
    })
    expect(field('/properties/feed/properties/limit')).toMatchObject({ type: 'integer', minimum: 1 })
    expect(field('/properties/feed/properties/limit')).not.toHaveProperty('maximum')
    expect(field('/properties/reading/properties/fullscreen/properties/enabled')).toMatchObject({
      type: 'boolean',
    })
  })

  it('has every field in the reference table of docs/site-config.md', async () => {
    const reference = await readFile(REFERENCE, 'utf8')
    const section = reference.slice(reference.indexOf('## The object'), reference.indexOf('## Files'))
    const rows = [...section.matchAll(/^\| ((?:_\w+_)?`[^`]+`) +\|/gm)].map(([, path]) =>
      path?.replaceAll('`', ''),
    )
    const definitions = Object.entries(document.$defs as Record<string, Record<string, unknown>>)
    expect(rows).toEqual([
      ...fieldPaths(document),
      ...definitions.flatMap(([name, definition]) => fieldPaths(definition, `_${name}_.`)),
    ])
  })

  it('documents every node with a title or a description', () => {
    for (const [pointer, node] of nodes(document)) {
      if (pointer.endsWith('/items')) continue
      expect(node.title ?? node.description, pointer).toEqual(expect.any(String))
    }
  })
})
