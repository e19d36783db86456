import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js'
import { type SiteConfig, siteConfigSchemaDocument } from './site-config-schema.js'

/** One reason a value is not a valid site configuration. */
export interface SiteConfigError {
  /** JSON Pointer of the offending value, e.g. `/toc/maxLevel`; `''` for the whole configuration. */
  pointer: string
  /** A sentence ready to print, e.g. `/toc/maxLevel must be an integer from 1 to 6, got 7`. */
  message: string
}

export type SiteConfigValidation = { ok: true; value: SiteConfig } | { ok: false; errors: SiteConfigError[] }

// allErrors: a configuration file is operator-written input of trusted size, and listing every mistake at once is
// the point of validating it (the HTTP request validator keeps allErrors off). `verbose` hands each error its
// schema node and value, from which the message is written. Nothing is coerced, defaulted or removed.
const ajv = new Ajv2020({
  strict: true,
  allErrors: true,
  verbose: true,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
})
const check = ajv.compile<SiteConfig>(siteConfigSchemaDocument())

/**
 * Checks a value (parsed JSON or YAML) against the site configuration schema, spec 2.6. On success the value is
 * returned unchanged, extra properties included; on failure every offending value is listed once, in document
 * order, with a sentence naming it and what it must be.
 */
export function validateSiteConfig(value: unknown): SiteConfigValidation {
  if (check(value)) return { ok: true, value }
  const errors = new Map<string, SiteConfigError>()
  for (const error of check.errors ?? []) {
    // a value failing both `type` and `maximum` (or `enum`) gets one sentence that states the whole constraint
    if (!errors.has(error.instancePath)) {
      errors.set(error.instancePath, { pointer: error.instancePath, message: describe(error) })
    }
  }
  return { ok: false, errors: [...errors.values()] }
}

interface SchemaNode {
  type?: string
  enum?: readonly unknown[]
  minimum?: number
  maximum?: number
  items?: SchemaNode
}

const NOUNS: Readonly<Record<string, [singular: string, plural: string]>> = {
  boolean: ['a boolean', 'booleans'],
  string: ['a string', 'strings'],
  integer: ['an integer', 'integers'],
  number: ['a number', 'numbers'],
  object: ['an object', 'objects'],
  array: ['an array', 'arrays'],
}

function describe(error: ErrorObject): string {
  const subject = error.instancePath === '' ? 'The site configuration' : error.instancePath
  const expected = expectation(error.parentSchema as SchemaNode | undefined)
  return `${subject} ${expected ? `must be ${expected}` : error.message}, got ${preview(error.data)}`
}

/** What a schema node accepts, in words: "an integer from 1 to 6", "one of always, hourly, ...". */
function expectation(schema: SchemaNode | undefined): string | undefined {
  if (!schema) return undefined
  if (schema.enum) return `one of ${schema.enum.map((value) => String(value)).join(', ')}`
  const noun = schema.type === undefined ? undefined : NOUNS[schema.type]?.[0]
  if (!noun) return undefined
  if (schema.type === 'array' && schema.items?.type) {
    const items = NOUNS[schema.items.type]?.[1]
    return items ? `an array of ${items}` : noun
  }
  const { minimum, maximum } = schema
  if (minimum !== undefined && maximum !== undefined) return `${noun} from ${minimum} to ${maximum}`
  if (minimum !== undefined) return `${noun} of at least ${minimum}`
  if (maximum !== undefined) return `${noun} of at most ${maximum}`
  return noun
}

const PREVIEW_LENGTH = 60

/** The offending value as JSON, shortened when long. */
function preview(value: unknown): string {
  // JSON would print Infinity and NaN (YAML's .inf and .nan) as null, and undefined not at all
  const text =
    typeof value === 'number' && !Number.isFinite(value)
      ? String(value)
      : (JSON.stringify(value) ?? String(value))
  return text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH - 3)}...` : text
}
