import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { expect } from 'vitest'

/** One answer of the service over HTTP, as a client saw it. */
export interface Answer {
  method: string
  /** The path as the document lists it (without the server URL of `servers`). */
  path: string
  status: number
  headers: Headers
  text: string
}

/** An operation's answer (`operationId status`) or an unmatched request's (`NotFound`, `MethodNotAllowed`). */
export type Exercised = string

const pointer = (...parts: string[]) =>
  `#/${parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`

/**
 * The served OpenAPI document as a contract: every answer checked against it with Ajv (JSON Schema 2020-12, the
 * dialect of OpenAPI 3.1): its status is documented for the operation (or, for a request that matches none, is the
 * 404 or 405 of `components.responses`), its body is valid against the documented schema of its media type, a
 * message without field errors is one of the documented examples, and every documented header is present with a
 * valid value.
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
    // the document itself is no JSON Schema, only the place its schemas are referred into: its own fields are
    // declared as keywords with no meaning, so that strict mode checks the schemas and not the document
    this.ajv.addVocabulary(Object.keys(document).filter((key) => this.ajv.getKeyword(key) === false))
    this.ajv.addSchema(document, 'openapi.json', undefined, false)
  }

  /** Every documented answer: `operationId status` of each operation, and the components' responses. */
  documented(): Exercised[] {
    const byOperation = Object.values(this.document.paths).flatMap((item: any) =>
      Object.values(item).flatMap((operation: any) =>
        Object.keys(operation.responses).map((status) => `${operation.operationId} ${status}`),
      ),
    )
    return [...byOperation, ...Object.keys(this.document.components.responses)]
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
    const where = `${answer.method} ${answer.path} → ${answer.status} ${answer.text.slice(0, 200)}`
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
    const response = location.reduce((node, key) => node[key], this.document)

    const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? ''
    expect(Object.keys(response.content ?? {}), `media type not documented: ${where}`).toContain(mediaType)
    if (answer.method !== 'HEAD') {
      const body = JSON.parse(answer.text)
      this.expectValid([...location, 'content', mediaType, 'schema'], body, `body of ${where}`)
      const examples = response.content[mediaType].examples
      if (examples && body?.data === null) {
        const messages = Object.values(examples).map((example: any) => example.value.message)
        expect(messages, `message not among the documented examples: ${where}`).toContain(body.message)
      }
    }

    for (const [header, definition] of Object.entries(response.headers ?? {})) {
      const value = answer.headers.get(header)
      expect(value, `header ${header} missing: ${where}`).not.toBeNull()
      const schema = (definition as { schema: { type?: string } }).schema
      const typed = schema.type === 'integer' && /^-?\d+$/.test(value ?? '') ? Number(value) : value
      this.expectValid([...location, 'headers', header, 'schema'], typed, `header ${header} of ${where}`)
    }
    this.exercised.add(name)
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
