import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { expect } from 'vitest'

/** One answer of the service over HTTP, as a client saw it. */
export interface Answer {
  method: string
  /** The path as the document lists it (without the server URL of `servers`). */
  path: string
  status: number
  headers: Headers
  /** The body's bytes, as received. */
  body: Buffer
}

/** An operation's answer (`operationId status`) or an unmatched request's (`NotFound`, `MethodNotAllowed`). */
export type Exercised = string

const pointer = (...parts: string[]) =>
  `#/${parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`

/** A JSON media type: application/json, or a structured syntax suffix `+json` (RFC 6839). */
const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json')

/** The signature an image of each type the document may serve begins with (its magic bytes). */
const IMAGE_SIGNATURES: Readonly<Record<string, (bytes: Buffer) => boolean>> = {
  'image/jpeg': (bytes) => bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff])),
  'image/png': (bytes) => bytes.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')),
  'image/webp': (bytes) =>
    bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP',
}

/**
 * The served OpenAPI document as a contract: every answer checked against it with Ajv (JSON Schema 2020-12, the
 * dialect of OpenAPI 3.1): its status is documented for the operation (or, for a request that matches none, is the
 * 404 or 405 of `components.responses`), its media type is one documented for the status, and its body is valid
 * against that media type's schema (a JSON body parsed, a page as its text; an image, whose schema only says
 * `binary`, begins with the signature of its type), a message without field errors is one of the documented
 * examples, an answer documented without content (a redirect) has no body, and every documented header is present
 * with a valid value.
 */
export class ApiDocument {
  readonly exercised = new Set<Exercised>()
  private readonly ajv: Ajv2020
  private readonly compiled = new Map<string, ValidateFunction>()

  constructor(readonly document: any) {
    this.ajv = new Ajv2020({ strict: true, allErrors: true })
    // the one format of the answers' schemas (created_at): RFC 3339, as OpenAPI defines `date-time`
    this.ajv.addFormat(
      'date-time',
      (value: string) =>
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) &&
        !Number.isNaN(Date.parse(value)),
    )
    // the other (a redirect's Location): an absolute URI, as RFC 3986 and the WHATWG URL parser agree on it
    this.ajv.addFormat('uri', (value: string) => /^[a-z][a-z0-9+.-]*:/i.test(value) && URL.canParse(value))
    // the document itself is no JSON Schema, only the place its schemas are referred into: its own fields are
    // declared as keywords with no meaning, so that strict mode checks the schemas and not the document
    this.ajv.addVocabulary(Object.keys(document).filter((key) => this.ajv.getKeyword(key) === false))
    this.ajv.addSchema(document, 'openapi.json', undefined, false)
  }

  /**
   * Every documented answer: `operationId status` of each operation, and the components' responses that no operation
   * refers to (those of unmatched requests; the others are answers shared by several operations, src/http/
   * shared-components.ts, and exercised as theirs).
   */
  documented(): Exercised[] {
    const operations = Object.values(this.document.paths).flatMap((item: any) => Object.values(item))
    const byOperation = operations.flatMap((operation: any) =>
      Object.keys(operation.responses).map((status) => `${operation.operationId} ${status}`),
    )
    const referred = new Set(
      operations.flatMap((operation: any) =>
        Object.values(operation.responses).map((response: any) => response.$ref),
      ),
    )
    const unmatched = Object.keys(this.document.components.responses).filter(
      (name) => !referred.has(pointer('components', 'responses', name)),
    )
    return [...byOperation, ...unmatched]
  }

  /**
   * The document's path that a request's path (its query string left out) matches: itself, or a template whose
   * `{parameter}` segments stand for any one segment (`/auth/sessions/{id}`); null when none does.
   */
  private templateOf(requested: string): string | null {
    const path = requested.split('?', 1)[0] ?? ''
    if (path in this.document.paths) return path
    const segments = path.split('/')
    const matches = Object.keys(this.document.paths).filter((template) => {
      const parts = template.split('/')
      return (
        parts.length === segments.length &&
        parts.every((part, index) => /^\{[^}]+\}$/.test(part) || part === segments[index])
      )
    })
    return matches[0] ?? null
  }

  /** Checks one answer against the document (failing the test on any mismatch) and records what it exercised. */
  check(answer: Answer): void {
    const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? ''
    const shown = mediaType.startsWith('image/')
      ? `<${answer.body.length} bytes>`
      : answer.body.toString('utf8')
    const where = `${answer.method} ${answer.path} → ${answer.status} ${shown.slice(0, 200)}`
    const template = this.templateOf(answer.path)
    const item = template === null ? undefined : this.document.paths[template]
    const operation = item?.[answer.method.toLowerCase()]
    let location: string[]
    let name: Exercised
    if (operation && template !== null) {
      location = ['paths', template, answer.method.toLowerCase(), 'responses', String(answer.status)]
      name = `${operation.operationId} ${answer.status}`
      expect(operation.responses, `status not documented: ${where}`).toHaveProperty([String(answer.status)])
    } else {
      const component = item ? 'MethodNotAllowed' : 'NotFound'
      expect(answer.status, where).toBe(component === 'NotFound' ? 404 : 405)
      location = ['components', 'responses', component]
      name = component
    }
    let response = location.reduce((node, key) => node[key], this.document)
    if (typeof response.$ref === 'string') {
      // an answer several operations share, defined once in components.responses (src/http/shared-components.ts)
      location = response.$ref.slice(2).split('/')
      response = location.reduce((node, key) => node[key], this.document)
    }

    if (response.content === undefined) {
      // a redirect: its Location is the answer (checked with the headers below)
      expect(answer.body.length, `a body where the document has none: ${where}`).toBe(0)
    } else {
      expect(Object.keys(response.content), `media type not documented: ${where}`).toContain(mediaType)
      if (answer.method !== 'HEAD')
        this.checkBody([...location, 'content', mediaType], mediaType, answer, where)
    }

    for (const [header, written] of Object.entries(response.headers ?? {})) {
      const value = answer.headers.get(header)
      expect(value, `header ${header} missing: ${where}`).not.toBeNull()
      // a header defined once in components.headers and referred to (src/http/shared-components.ts)
      const ref = (written as { $ref?: string }).$ref
      const at = ref === undefined ? [...location, 'headers', header] : ref.slice(2).split('/')
      const definition = at.reduce((node, key) => node[key], this.document)
      const schema = (definition as { schema: { type?: string } }).schema
      const typed = schema.type === 'integer' && /^-?\d+$/.test(value ?? '') ? Number(value) : value
      this.expectValid([...at, 'schema'], typed, `header ${header} of ${where}`)
    }
    this.exercised.add(name)
  }

  /** The body against its media type's entry in the document (`location`), as its type allows. */
  private checkBody(location: string[], mediaType: string, answer: Answer, where: string): void {
    const entry = location.reduce((node, key) => node[key], this.document)
    if (isJson(mediaType)) {
      const body = JSON.parse(answer.body.toString('utf8'))
      this.expectValid([...location, 'schema'], body, `body of ${where}`)
      if (entry.examples && body?.data === null) {
        const messages = Object.values(entry.examples).map((example: any) => example.value.message)
        expect(messages, `message not among the documented examples: ${where}`).toContain(body.message)
      }
    } else if (mediaType.startsWith('text/')) {
      this.expectValid([...location, 'schema'], answer.body.toString('utf8'), `body of ${where}`)
    } else {
      // bytes: the schema says only that (format binary), the signature says whether they are what the type claims
      expect(entry.schema, `schema of ${where}`).toMatchObject({ type: 'string', format: 'binary' })
      const signature = IMAGE_SIGNATURES[mediaType]
      expect(signature, `no check for the media type of ${where}`).toBeDefined()
      expect(signature?.(answer.body), `the bytes are not ${mediaType}: ${where}`).toBe(true)
    }
  }

  private expectValid(path: string[], value: unknown, what: string): void {
    const ref = `openapi.json${pointer(...path)}`
    let validate = this.compiled.get(ref)
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref })
      this.compiled.set(ref, validate)
    }
    const valid = validate(value)
    expect(valid ? [] : validate.errors, `${what} is not valid against ${ref}`).toEqual([])
  }
}
