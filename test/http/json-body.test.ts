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
    'application/json; charset=utf-16',
    'application/json; charset=UTF-16LE',
    'application/json; charset=latin1',
    'application/json; charset="iso-8859-1"',
    'application/json;charset=us-ascii',
  ])(
    'R1.3 a body that declares a charset other than UTF-8 is a 415 and changes nothing: %s',
    async (contentType) => {
      const email = uniqueEmail()
      expectError(
        await post('/auth/register', { email, password: PASSWORD }, { 'content-type': contentType }),
        415,
        MESSAGES.unsupportedMediaType,
      )
      // nothing was registered: the same body as UTF-8 creates the account
      expect((await post('/auth/register', { email, password: PASSWORD })).status).toBe(200)
    },
  )

  it.each([
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; charset=utf8',
  ])('R1.3 a body that declares UTF-8 is read: %s', async (contentType) => {
    const answer = await post(
      '/auth/register',
      { email: uniqueEmail(), password: PASSWORD },
      { 'content-type': contentType },
    )
    expect(answer.status).toBe(200)
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
  /** A login body whose password holds the given bytes, the rest ASCII. */
  const bodyWithPasswordBytes = (email: string, bytes: number[]) =>
    Buffer.concat([
      Buffer.from(`{"email":"${email}","password":"correct horse `),
      Buffer.from(bytes),
      Buffer.from('"}'),
    ])
  const postBytes = (url: string, payload: Buffer) =>
    service.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload })

  it.each([
    ['a lone continuation byte', [0x80]],
    ['bytes that are never UTF-8', [0xff, 0xfe]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ])(
    'R1.4 a body that is not valid UTF-8 is a 400 that says so, and changes nothing: %s',
    async (_case, bytes) => {
      const email = uniqueEmail()
      const reply = await postBytes('/auth/register', bodyWithPasswordBytes(email, bytes))
      expect(reply.statusCode).toBe(400)
      expect(reply.json()).toEqual({ code: 400, message: 'Request body is not valid UTF-8', data: null })
      // the account was not created: the e-mail is still free
      expect((await post('/auth/register', { email, password: PASSWORD })).status).toBe(200)
    },
  )

  it('R1.4 valid UTF-8 of every length is read as sent, U+FFFD included', async () => {
    const email = uniqueEmail()
    const password = 'correct horse é€😀\uFFFD'
    expect((await post('/auth/register', { email, password })).status).toBe(200)
    const login = await postBytes('/auth/login', Buffer.from(JSON.stringify({ email, password }), 'utf8'))
    expect(login.statusCode).toBe(200)
  })
})
