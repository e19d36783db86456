import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DOCS_CSP } from '../../src/http/openapi.js'
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

  it('R4.9.2 the page and its assets carry a strict Content-Security-Policy: own files only, no inline code, no framing', async () => {
    expect(DOCS_CSP).not.toMatch(/unsafe|\*|https?:/)
    for (const url of ['/docs', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js']) {
      const reply = await service.app.inject({ method: 'GET', url })
      expect(reply.statusCode, url).toBe(200)
      expect(reply.headers['content-security-policy'], url).toBe(DOCS_CSP)
    }
  })

  it('is one buffer prepared at start: every request gets the same bytes, and nothing is serialized per request', async () => {
    const stringify = vi.spyOn(JSON, 'stringify')
    const swagger = vi.spyOn(service.app, 'swagger')
    try {
      const answers = await Promise.all(
        ['/openapi.json', '/openapi.json', '/docs/json'].map((url) =>
          service.app.inject({ method: 'GET', url }),
        ),
      )
      for (const answer of answers) {
        expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
        expect(answer.body).toBe(answers[0]?.body)
      }
      expect(JSON.parse(answers[0]?.body ?? '')).toEqual(document)
      expect((await service.app.inject({ method: 'GET', url: '/docs/yaml' })).body).toContain(
        'openapi: 3.1.0',
      )
      expect(swagger).not.toHaveBeenCalled()
      expect(stringify.mock.calls.filter(([value]) => (value as { openapi?: unknown })?.openapi)).toEqual([])
    } finally {
      stringify.mockRestore()
      swagger.mockRestore()
    }
  })
})

describe('R4.9.1 API_DOCS turns GET /openapi.json and GET /docs on or off (off by default in production)', () => {
  it.each([
    [{ API_DOCS: 'false' }, 404],
    [{ NODE_ENV: 'production' }, 404],
    [{ NODE_ENV: 'production', API_DOCS: 'true' }, 200],
    [{}, 200],
  ])('%j: %i', async (env, status) => {
    const service = await startTestService(backends[0]!, { env })
    try {
      for (const url of ['/openapi.json', '/docs', '/docs/json', '/docs/static/swagger-ui.css']) {
        expect((await call(service.app, 'GET', url)).status, url).toBe(status)
      }
    } finally {
      await service.close()
    }
  })
})
