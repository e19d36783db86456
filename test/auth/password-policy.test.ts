import { Ajv } from 'ajv'
import type { FastifySchemaValidationError } from 'fastify'
import type { TSchema } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  loginPasswordProblem,
  newPasswordProblem,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  passwordLength,
} from '../../src/auth/password-policy.js'
import { LoginBody, RefreshBody, RegisterBody } from '../../src/http/schemas.js'
import { ajvOptions, toValidationError } from '../../src/http/validation.js'
import { english } from '../../src/language/catalogues.js'
import type { Message } from '../../src/language/message.js'
import { backends } from '../support/backends.js'
import { call, expectError, PASSWORD, uniqueEmail } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

/** A problem as English text (the language of the specification's messages). */
const written = (problem: Message | null) => (problem === null ? null : english(problem))

/** The one message of the rule (spec 4.3, 8; DECISIONS: Password length). */
const RULE = 'must have 8 to 100 characters of well-formed Unicode'
const LOGIN_RULE = 'must have at most 100 characters of well-formed Unicode'

/** New passwords and whether the rule takes them: 8 to 100 code points, well-formed. */
const NEW_PASSWORDS: Array<[string, string, boolean]> = [
  ['empty', '', false],
  ['7 characters', 'a'.repeat(7), false],
  ['8 characters', 'a'.repeat(8), true],
  ['100 characters', 'a'.repeat(100), true],
  ['101 characters', 'a'.repeat(101), false],
  ['7 emoji (14 UTF-16 units)', '😀'.repeat(7), false],
  ['8 emoji', '😀'.repeat(8), true],
  ['100 emoji (200 UTF-16 units)', '😀'.repeat(100), true],
  ['101 emoji', '😀'.repeat(101), false],
  ['a lone high surrogate', 'abcdefgh\ud800', false],
  ['a lone low surrogate', '\udc00abcdefgh', false],
  ['8 spaces', ' '.repeat(8), true],
]

/** Login passwords and the check's answer: null is "verify it" (a wrong one is then a 401). */
const LOGIN_PASSWORDS: Array<[string, string, string | null]> = [
  ['empty', '', 'must not be empty'],
  ['"wrong" (shorter than any account has)', 'wrong', null],
  ['1 character', 'x', null],
  ['100 characters', 'a'.repeat(100), null],
  ['100 emoji', '😀'.repeat(100), null],
  ['101 characters', 'a'.repeat(101), LOGIN_RULE],
  ['a lone surrogate', 'abcdefgh\ud800', LOGIN_RULE],
]

describe('the password policy', () => {
  it('counts code points, not UTF-16 units', () => {
    expect(passwordLength('😀'.repeat(8))).toBe(8)
    expect([PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH]).toEqual([8, 100])
  })

  it.each(NEW_PASSWORDS)('a new password of %s: accepted %s', (_case, password, accepted) => {
    expect(written(newPasswordProblem(password))).toBe(accepted ? null : RULE)
  })

  it.each(LOGIN_PASSWORDS)('a login password of %s: %s', (_case, password, problem) => {
    expect(written(loginPasswordProblem(password))).toBe(problem)
  })
})

/** The request schemas compiled as Fastify compiles them: the options and keywords of http/validation.ts. */
function schemaProblems(schema: TSchema, body: unknown) {
  const ajv = new Ajv({ ...ajvOptions.customOptions })
  ajvOptions.onCreate?.(ajv)
  const validate = ajv.compile(schema)
  if (validate(body)) return []
  return toValidationError((validate.errors ?? []) as FastifySchemaValidationError[]).envelopeData(english)
    .errors
}

describe('the request schemas apply the policy, with its message', () => {
  it.each(NEW_PASSWORDS)('register, a password of %s: accepted %s', (_case, password, accepted) => {
    expect(schemaProblems(RegisterBody, { email: 'a@example.com', password })).toEqual(
      accepted ? [] : [{ field: '/password', message: RULE }],
    )
  })

  it.each(LOGIN_PASSWORDS)('login, a password of %s: %s', (_case, password, problem) => {
    expect(schemaProblems(LoginBody, { email: 'a@example.com', password })).toEqual(
      problem === null ? [] : [{ field: '/password', message: problem }],
    )
  })

  it('a password that is not a string is refused by its type first', () => {
    for (const schema of [RegisterBody, LoginBody]) {
      expect(schemaProblems(schema, { email: 'a@example.com', password: 12345678 })).toEqual([
        { field: '/password', message: 'must be a string' },
      ])
    }
  })

  it('the limits stay in the schema, for the OpenAPI document', () => {
    expect(RegisterBody.properties.password).toMatchObject({
      minLength: 8,
      maxLength: 100,
      format: 'password',
    })
    expect(LoginBody.properties.password).toMatchObject({ minLength: 1, maxLength: 100, format: 'password' })
  })

  it('other length limits read as sentences: "must not be empty", never "at least 1 characters"', () => {
    expect(schemaProblems(RefreshBody, { refresh_token: '' })).toEqual([
      { field: '/refresh_token', message: 'must not be empty' },
    ])
    expect(schemaProblems(RefreshBody, { refresh_token: 'a'.repeat(4097) })).toEqual([
      { field: '/refresh_token', message: 'must have at most 4096 characters' },
    ])
  })
})

describe('over HTTP', () => {
  let service: TestService
  const sqlite = backends.find((backend) => backend.name === 'sqlite')
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('SQLite is always among the backends')
    service = await startTestService(sqlite)
  })
  afterAll(() => service.close())

  it('register answers the rule in the envelope', async () => {
    const reply = await call(service.app, 'POST', '/auth/register', {
      body: { email: uniqueEmail(), password: 'short' },
    })
    expect(reply.status).toBe(400)
    expect(reply.body).toEqual({
      code: 400,
      message: `Invalid request: /password ${RULE}`,
      data: { errors: [{ field: '/password', message: RULE }] },
    })
  })

  it('login answers 401 for a wrong password shorter than any account has, 400 for an empty one', async () => {
    const email = uniqueEmail()
    await call(service.app, 'POST', '/auth/register', { body: { email, password: PASSWORD } })
    const login = (password: string) =>
      call(service.app, 'POST', '/auth/login', { body: { email, password } })
    expectError(await login('wrong'), 401, MESSAGES.invalidCredentials)
    const empty = await login('')
    expect(empty.status).toBe(400)
    expect(empty.body.data.errors).toEqual([{ field: '/password', message: 'must not be empty' }])
  })
})
