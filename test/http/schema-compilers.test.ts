import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { handleError } from '../../src/http/error-handler.js'
import { registerResponses } from '../../src/http/responses.js'
import { sharedSchemaController } from '../../src/http/schema-compilers.js'
import { ErrorResponse, HealthResponse, RegisterBody } from '../../src/http/schemas.js'
import { ajvOptions, toValidationError } from '../../src/http/validation.js'

// src/http/schema-compilers.ts: the shared compilers compile each validator and serializer at its first call. Every
// answer must be the one Fastify's own compilers, which compile everything at start, give.

const apps: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

/** An app with a route that validates a registration body and serializes a health answer, as buildApp sets it up. */
async function appWith(compilers: Pick<FastifyServerOptions, 'schemaController'>): Promise<FastifyInstance> {
  const app = Fastify({ ajv: ajvOptions, schemaErrorFormatter: toValidationError, ...compilers })
  apps.push(app)
  app.setErrorHandler(handleError)
  app.addSchema(ErrorResponse)
  app.post(
    '/register',
    { schema: { body: RegisterBody, response: { ...registerResponses(), 200: HealthResponse('ok') } } },
    // what the serializer drops (an undocumented property) and keeps shows in the answer
    async () => ({ status: 'ok', checks: { database: true }, internal: 'not sent' }),
  )
  app.get(
    '/items/:id',
    { schema: { params: { type: 'object', properties: { id: { type: 'string' } } } } },
    () => ({
      ok: true,
    }),
  )
  await app.ready()
  return app
}

const requests = [
  { method: 'POST', url: '/register', payload: {} },
  { method: 'POST', url: '/register', payload: { email: 'a@example.com' } },
  { method: 'POST', url: '/register', payload: { email: 42, password: 'x' } },
  {
    method: 'POST',
    url: '/register',
    payload: { email: 'not an address', password: 'correct horse battery' },
  },
  { method: 'POST', url: '/register', payload: { email: 'a@example.com', password: 'short' } },
  {
    method: 'POST',
    url: '/register',
    payload: { email: 'a@example.com', password: 'correct horse battery staple' },
  },
  { method: 'POST', url: '/register', payload: [] },
  { method: 'GET', url: '/items/7' },
] as const

describe('the shared schema compilers', () => {
  it('answer every request as Fastify compiling every schema at start does, at the first request and after', async () => {
    const eager = await appWith({})
    const lazy = await appWith({ schemaController: sharedSchemaController })
    for (const round of [1, 2]) {
      for (const request of requests) {
        const [expected, actual] = await Promise.all([eager.inject(request), lazy.inject(request)])
        expect({ round, request, status: actual.statusCode, body: actual.body }).toEqual({
          round,
          request,
          status: expected.statusCode,
          body: expected.body,
        })
      }
    }
    // the cases above do reach both outcomes
    const answers = await Promise.all(requests.map((request) => lazy.inject(request)))
    expect(answers.map((answer) => answer.statusCode)).toEqual([400, 400, 400, 400, 400, 200, 400, 200])
    expect(answers[5]?.json()).toEqual({ status: 'ok', checks: { database: true } })
  })

  it('compile nothing before a route is called: a schema Ajv refuses fails at its first request, not at start', async () => {
    const app = Fastify({ ajv: ajvOptions, schemaController: sharedSchemaController })
    apps.push(app)
    app.post('/refused', { schema: { body: { type: 'no such type' } } }, async () => ({}))
    app.get('/unrefused', { schema: { response: { 200: { type: 'no such type' } } } }, async () => ({}))
    await app.ready()
    expect((await app.inject({ method: 'POST', url: '/refused', payload: {} })).statusCode).toBe(500)
    expect((await app.inject({ method: 'GET', url: '/unrefused' })).statusCode).toBe(500)
    // Fastify's own compilers refuse the start
    const eager = Fastify({ ajv: ajvOptions })
    apps.push(eager)
    eager.post('/refused', { schema: { body: { type: 'no such type' } } }, async () => ({}))
    await expect(eager.ready()).rejects.toThrow(/no such type|type/)
  })
})
