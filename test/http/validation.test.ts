import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DESCRIBED_KEYWORDS } from '../../src/http/validation.js'
import { backends } from '../support/backends.js'
import { call, decodeJwt, PASSWORD, uniqueEmail } from '../support/http.js'
import { FIELD_MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

/** What a schema says without checking anything: its words, its examples, its default. */
const ANNOTATIONS = new Set(['description', 'examples', 'default', 'title', '$id', 'contentMediaType'])
/** What holds other schemas, walked into: its own failure is that of one of them. */
const STRUCTURE = new Set(['items', 'anyOf', 'oneOf', 'allOf'])

// docs/api.md R1.5 to R1.8, implemented by src/http/validation.ts and the schemas of src/http/schemas.ts.
describe('validation: the 400 of a request that does not fit its schema', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
  })
  afterAll(() => service.close())

  const post = (url: string, body: unknown) => call(service.app, 'POST', url, { body })

  it.each([
    ['an array', '[]'],
    ['a string', '"a@example.com"'],
    ['null', 'null'],
    ['a number', '42'],
    ['no body at all', undefined],
  ])('R1.5 a body that is not an object is a 400: %s', async (_case, text) => {
    const reply = await post('/auth/login', text)
    expect(reply.status).toBe(400)
    expect(reply.body).toEqual({
      code: 400,
      message: `Invalid request: body ${FIELD_MESSAGES.notObject}`,
      data: { errors: [{ field: '', message: FIELD_MESSAGES.notObject }] },
    })
  })

  it('R1.6 the 400 names the first failing field by JSON Pointer, and only that one', async () => {
    const reply = await post('/auth/register', { password: 7 })
    expect(reply.status).toBe(400)
    expect(reply.body).toEqual({
      code: 400,
      message: `Invalid request: /email ${FIELD_MESSAGES.required}`,
      data: { errors: [{ field: '/email', message: FIELD_MESSAGES.required }] },
    })
  })

  it.each([
    ['a number', 12345678],
    ['a boolean', true],
    ['null', null],
    ['an array', ['correct horse']],
    ['an object', { value: 'correct horse' }],
  ])('R1.7 no type coercion: %s where a string belongs is a 400', async (_case, password) => {
    const reply = await post('/auth/register', { email: uniqueEmail(), password })
    expect(reply.status).toBe(400)
    expect(reply.body.data.errors).toEqual([{ field: '/password', message: FIELD_MESSAGES.notString }])
  })

  it('R1.6 every keyword of every request schema has a text of its own in the catalogues (R1.19)', async () => {
    const document = (await call(service.app, 'GET', '/openapi.json')).body
    const keywords = new Set<string>()
    const walk = (schema: unknown): void => {
      if (typeof schema !== 'object' || schema === null) return
      for (const [keyword, value] of Object.entries(schema)) {
        if (keyword === 'properties') for (const property of Object.values(value as object)) walk(property)
        else if (STRUCTURE.has(keyword)) [value].flat().forEach(walk)
        else if (!ANNOTATIONS.has(keyword)) keywords.add(keyword)
      }
    }
    for (const operations of Object.values(document.paths) as Array<Record<string, any>>) {
      for (const operation of Object.values(operations)) {
        for (const parameter of operation.parameters ?? []) walk(parameter.schema)
        for (const media of Object.values(operation.requestBody?.content ?? {}) as any[]) walk(media.schema)
      }
    }
    expect([...keywords].sort()).toEqual(expect.arrayContaining(['enum', 'pattern', 'required', 'type']))
    const undescribed = [...keywords].filter(
      (keyword) => !(DESCRIBED_KEYWORDS as readonly string[]).includes(keyword),
    )
    expect(undescribed).toEqual([])
  })

  it('R1.8 fields the schema does not name are ignored', async () => {
    const email = uniqueEmail()
    const reply = await post('/auth/register', { email, password: PASSWORD, role: 'admin', id: '1' })
    expect(reply.status).toBe(200)
    expect(reply.body.data.id).not.toBe('1')
    // an ordinary account: the role field is the account's own (docs/api.md §2.1), never the request's
    expect(reply.body.data.role).toBe('user')
    const login = await post('/auth/login', { email, password: PASSWORD })
    expect(login.body.data.id).not.toBe('1')
    expect(login.body.data.role).toBe('user')
    expect(decodeJwt(login.body.data.access_token).claims).not.toHaveProperty('role')
  })
})
