import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LoginBody, RefreshBody, RegisterBody } from '../../src/http/schemas.js'
import { backends } from '../support/backends.js'
import { call } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'

const packageJson = (await import('../../package.json', { with: { type: 'json' } })).default

describe('GET /openapi.json: the OpenAPI 3.1 document generated from the route schemas', () => {
  let service: TestService
  let document: any
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
    document = (await call(service.app, 'GET', '/openapi.json')).body
  })
  afterAll(() => service.close())

  it('is OpenAPI 3.1 with the package name and version', () => {
    expect(document.openapi).toBe('3.1.0')
    expect(document.info).toMatchObject({ title: packageJson.name, version: packageJson.version })
  })

  it('lists every endpoint, and not its own documentation routes', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`),
    )
    expect(operations).toEqual(
      expect.arrayContaining([
        'GET /health',
        'GET /info',
        'POST /auth/register',
        'POST /auth/login',
        'POST /auth/refresh',
        'POST /auth/delete-refresh-token',
        'GET /auth/me',
      ]),
    )
    expect(operations.some((operation) => operation.includes('/docs') || operation.includes('openapi'))).toBe(
      false,
    )
  })

  it.each([
    ['/auth/register', RegisterBody],
    ['/auth/login', LoginBody],
    ['/auth/refresh', RefreshBody],
  ])('the request body of %s is the schema that validates it', (path, schema) => {
    const documented = document.paths[path].post.requestBody.content['application/json'].schema
    expect(documented).toEqual(JSON.parse(JSON.stringify(schema)))
  })

  it('marks protected endpoints with the bearer scheme', () => {
    expect(document.components.securitySchemes.bearerAuth).toEqual({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    })
    expect(document.paths['/auth/me'].get.security).toEqual([{ bearerAuth: [] }])
    expect(document.paths['/auth/delete-refresh-token'].post.security).toEqual([{ bearerAuth: [] }])
    expect(document.paths['/auth/login'].post.security).toBeUndefined()
  })

  it('documents the error envelope once, and refers to it from each error status', () => {
    expect(document.components.schemas.ErrorResponse.required).toEqual(['code', 'message', 'data'])
    const conflict = document.paths['/auth/register'].post.responses['409']
    expect(JSON.stringify(conflict)).toContain('#/components/schemas/ErrorResponse')
  })

  it('GET /docs serves the browsable page', async () => {
    const reply = await service.app.inject({ method: 'GET', url: '/docs' })
    expect(reply.statusCode).toBe(200)
    expect(reply.headers['content-type']).toMatch(/^text\/html/)
    expect(reply.body).toContain('swagger-ui')
  })
})
