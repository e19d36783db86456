import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { call, expectError, PASSWORD, uniqueEmail } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

// docs/api.md R1.3 and R1.4, implemented by src/http/json-body.ts: JSON is the only body type, parsed strictly.
describe('json-body: request bodies are JSON only', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
  })
  afterAll(() => service.close())

  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    call(service.app, 'POST', url, { body, headers })

  it('R1.3 a body with another Content-Type, or none, is a 415; parameters of application/json are allowed', async () => {
    expectError(
      await post('/auth/login', `email=a@example.com&password=${PASSWORD}`, {
        'content-type': 'application/x-www-form-urlencoded',
      }),
      415,
      MESSAGES.unsupportedMediaType,
    )
    expectError(
      await post('/auth/login', '{}', { 'content-type': 'text/plain' }),
      415,
      MESSAGES.unsupportedMediaType,
    )
    const untyped = await service.app.inject({ method: 'POST', url: '/auth/login', payload: '{}' })
    expect(untyped.statusCode).toBe(415)
    expect(untyped.json()).toEqual({ code: 415, message: MESSAGES.unsupportedMediaType, data: null })
    const withCharset = await post(
      '/auth/register',
      { email: uniqueEmail(), password: PASSWORD },
      { 'content-type': 'application/json; charset=utf-8' },
    )
    expect(withCharset.status).toBe(200)
  })

  it.each([
    ['truncated JSON', '{"email": "a@example.com", '],
    ['single quotes', "{'email': 'a@example.com'}"],
    ['a trailing comma', '{"email": "a@example.com",}'],
    [
      'a __proto__ key',
      '{"__proto__": {"admin": true}, "email": "a@example.com", "password": "correct horse"}',
    ],
    [
      'a constructor.prototype key',
      '{"constructor": {"prototype": {"admin": true}}, "email": "a@example.com", "password": "x"}',
    ],
  ])('R1.4 a body that is not valid JSON is a 400 and changes nothing: %s', async (_case, text) => {
    expectError(await post('/auth/register', text), 400, MESSAGES.malformedBody)
    expect(({} as Record<string, unknown>).admin).toBeUndefined()
  })
})
