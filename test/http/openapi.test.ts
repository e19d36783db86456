import { readFile } from 'node:fs/promises'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { EMAIL_PATTERN } from '../../src/auth/email.js'
import { DOCS_CSP, registerOpenApi } from '../../src/http/openapi.js'
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

  /** A node of the document, or the one its `$ref` points to (an answer or a header defined once in components). */
  const resolved = (node: any): any =>
    typeof node?.$ref === 'string'
      ? node.$ref
          .slice(2)
          .split('/')
          .reduce((at: any, key: string) => at[key], document)
      : node
  /** The answer `status` of the operation `method path`, followed to components.responses where it is shared. */
  const answer = (path: string, method: string, status: string) =>
    resolved(document.paths[path][method].responses[status])

  /** Every operation of the document: its method, path and object. */
  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, any>).map(([method, operation]) => ({ method, path, operation })),
    )

  it('R4.9.3 names every operation with a stable operationId, and says which need the access token', () => {
    expect(document.components.securitySchemes.bearerAuth).toEqual({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    })
    const byOperation = Object.fromEntries(
      operations().map(({ method, path, operation }) => [
        `${method.toUpperCase()} ${path}`,
        [operation.operationId, operation.security],
      ]),
    )
    expect(byOperation).toEqual({
      'GET /health': ['getHealth', []],
      'GET /info': ['getInfo', []],
      'GET /site-config': ['getSiteConfig', []],
      'GET /site-config/schema': ['getSiteConfigSchema', []],
      'GET /.well-known/jwks.json': ['getJwks', []],
      'GET /.well-known/openid-configuration': ['getOpenIdConfiguration', []],
      'POST /auth/register': ['register', []],
      'POST /auth/login': ['login', []],
      'POST /auth/refresh': ['refreshTokens', []],
      'POST /auth/delete-refresh-token': ['logout', [{ bearerAuth: [] }]],
      'GET /auth/me': ['getCurrentUser', [{ bearerAuth: [] }]],
      'GET /auth/sessions': ['listSessions', [{ bearerAuth: [] }]],
      'DELETE /auth/sessions/{id}': ['endSession', [{ bearerAuth: [] }]],
      'POST /auth/email/send-code': ['sendCode', []],
      'POST /auth/login/email-code': ['loginWithCode', []],
      'POST /auth/password/reset': ['resetPassword', []],
      'POST /auth/me/send-code': ['sendAccountCode', [{ bearerAuth: [] }]],
      'POST /auth/password/change': ['changePassword', [{ bearerAuth: [] }]],
      'POST /auth/email/change': ['changeEmail', [{ bearerAuth: [] }]],
      'POST /auth/email/verify': ['verifyEmail', [{ bearerAuth: [] }]],
      'POST /auth/delete': ['deleteAccount', [{ bearerAuth: [] }]],
      'PUT /auth/profile': ['updateProfile', [{ bearerAuth: [] }]],
      'POST /auth/avatar': ['uploadAvatar', [{ bearerAuth: [] }]],
      'DELETE /auth/avatar': ['removeAvatar', [{ bearerAuth: [] }]],
      'GET /avatars/{id}': ['getAvatar', []],
      'GET /auth/oauth/providers': ['listProviders', []],
      'GET /auth/oauth/{provider}/start': ['startProviderSignIn', []],
      'GET /auth/oauth/{provider}/callback': ['finishProviderSignIn', []],
      'POST /auth/oauth/exchange': ['exchangeProviderCode', []],
      'DELETE /auth/oauth/{provider}': ['unlinkProvider', [{ bearerAuth: [] }]],
      'POST /auth/passkeys/register/options': ['passkeyRegistrationOptions', [{ bearerAuth: [] }]],
      'POST /auth/passkeys/register/verify': ['passkeyRegister', [{ bearerAuth: [] }]],
      'POST /auth/passkeys/login/options': ['passkeyLoginOptions', []],
      'POST /auth/passkeys/login/verify': ['passkeyLogin', []],
      'POST /auth/mfa/verify': ['verifySecondFactor', []],
      'GET /auth/mfa/factors': ['listFactors', [{ bearerAuth: [] }]],
      'POST /auth/mfa/totp/setup': ['setUpTotp', [{ bearerAuth: [] }]],
      'POST /auth/mfa/totp/confirm': ['confirmTotp', [{ bearerAuth: [] }]],
      'DELETE /auth/mfa/factors/{id}': ['removeFactor', [{ bearerAuth: [] }]],
      'POST /auth/mfa/recovery-codes': ['newRecoveryCodes', [{ bearerAuth: [] }]],
      'GET /admin/users': ['adminListUsers', [{ bearerAuth: [] }]],
      'GET /admin/users/{id}': ['adminGetUser', [{ bearerAuth: [] }]],
      'PUT /admin/users/{id}': ['adminUpdateUser', [{ bearerAuth: [] }]],
      'POST /admin/users/{id}/revoke': ['adminRevokeSessions', [{ bearerAuth: [] }]],
      'POST /admin/users/{id}/mfa-reset': ['adminResetSecondFactors', [{ bearerAuth: [] }]],
      'DELETE /admin/users/{id}': ['adminDeleteUser', [{ bearerAuth: [] }]],
      'GET /admin/audit': ['adminListAuditEvents', [{ bearerAuth: [] }]],
    })
  })

  it('R4.9.4 lists every status each operation answers (docs/api.md section 4), each with a description of its own', () => {
    const statuses = Object.fromEntries(
      operations().map(({ operation }) => [operation.operationId, Object.keys(operation.responses)]),
    )
    expect(statuses).toEqual({
      getHealth: ['200', '500', '503'],
      getInfo: ['200', '500'],
      getSiteConfig: ['200', '500'],
      getSiteConfigSchema: ['200', '500'],
      getJwks: ['200', '500'],
      getOpenIdConfiguration: ['200', '500'],
      register: ['200', '400', '403', '409', '413', '415', '429', '500', '503'],
      login: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      refreshTokens: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      logout: ['200', '400', '401', '403', '413', '415', '500', '503'],
      getCurrentUser: ['200', '401', '403', '500'],
      listSessions: ['200', '401', '403', '500'],
      endSession: ['200', '401', '403', '404', '500', '503'],
      sendCode: ['200', '400', '403', '413', '415', '429', '500', '503'],
      loginWithCode: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      resetPassword: ['200', '400', '403', '413', '415', '429', '500', '503'],
      sendAccountCode: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      changePassword: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      changeEmail: ['200', '400', '401', '403', '409', '413', '415', '429', '500', '503'],
      verifyEmail: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      deleteAccount: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      updateProfile: ['200', '400', '401', '403', '409', '413', '415', '429', '500', '503'],
      uploadAvatar: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      removeAvatar: ['200', '401', '403', '429', '500', '503'],
      getAvatar: ['200', '404', '500'],
      listProviders: ['200', '403', '500'],
      // browser navigations (docs/api.md §4.24): a redirect, or a page for what fails before the provider is reached
      startProviderSignIn: ['302', '400', '403', '404', '429', '500', '502', '503'],
      finishProviderSignIn: ['200', '302', '403', '404', '429', '500', '503'],
      exchangeProviderCode: ['200', '400', '403', '413', '415', '429', '500', '503'],
      unlinkProvider: ['200', '400', '401', '403', '404', '409', '429', '500', '503'],
      passkeyRegistrationOptions: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      passkeyRegister: ['200', '400', '401', '403', '409', '413', '415', '429', '500', '503'],
      passkeyLoginOptions: ['200', '400', '403', '413', '415', '429', '500', '503'],
      passkeyLogin: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      verifySecondFactor: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      setUpTotp: ['200', '400', '401', '403', '413', '415', '429', '500', '503'],
      confirmTotp: ['200', '400', '401', '403', '404', '413', '415', '429', '500', '503'],
      listFactors: ['200', '401', '403', '500'],
      removeFactor: ['200', '401', '403', '404', '413', '415', '429', '500', '503'],
      newRecoveryCodes: ['200', '401', '403', '413', '415', '429', '500', '503'],
      adminListUsers: ['200', '400', '401', '403', '500'],
      adminGetUser: ['200', '401', '403', '404', '500'],
      adminUpdateUser: ['200', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503'],
      adminRevokeSessions: ['200', '401', '403', '404', '413', '415', '429', '500', '503'],
      adminResetSecondFactors: ['200', '401', '403', '404', '413', '415', '429', '500', '503'],
      adminDeleteUser: ['204', '401', '403', '404', '409', '413', '415', '429', '500', '503'],
      adminListAuditEvents: ['200', '400', '401', '403', '500'],
    })
    const descriptions = operations().flatMap(({ operation }) =>
      Object.values(operation.responses).map((response: any) => resolved(response).description),
    )
    expect(descriptions.filter((text) => !text || text === 'Default Response')).toEqual([])
    expect(Object.keys(document.components.responses).slice(0, 2)).toEqual(['NotFound', 'MethodNotAllowed'])
    expect(Object.keys(document.components.responses.MethodNotAllowed.headers)).toEqual(['Allow'])
  })

  it('R4.9.5 defines an answer that several operations give alike once, under components.responses, and refers to it', () => {
    const written = operations().flatMap(({ operation }) => Object.values(operation.responses as object))
    const inline = written
      .filter((response: any) => response.$ref === undefined)
      .map((r) => JSON.stringify(r))
    // no two operations write out the same answer
    expect(inline.filter((text, index) => inline.indexOf(text) !== index)).toEqual([])
    const uses = new Map<string, number>()
    for (const response of written as Array<{ $ref?: string }>) {
      if (response.$ref !== undefined) uses.set(response.$ref, (uses.get(response.$ref) ?? 0) + 1)
    }
    // every shared answer is used by at least two operations; the unmatched requests' two by none
    for (const name of Object.keys(document.components.responses)) {
      const count = uses.get(`#/components/responses/${name}`) ?? 0
      if (name === 'NotFound' || name === 'MethodNotAllowed') expect(count, name).toBe(0)
      else expect(count, name).toBeGreaterThanOrEqual(2)
    }
    expect(document.paths['/auth/me'].get.responses['401']).toEqual(
      document.paths['/auth/sessions'].get.responses['401'],
    )
    expect(document.paths['/auth/me'].get.responses['401'].$ref).toMatch(
      /^#\/components\/responses\/Unauthorized/,
    )
  })

  /** The failures of a provider sign-in that answer a page, not the envelope (docs/api.md R4.24.11, R4.24.12). */
  const PROVIDER_PAGES = new Set([
    'startProviderSignIn 400',
    'startProviderSignIn 404',
    'startProviderSignIn 502',
    'finishProviderSignIn 404',
  ])

  it('R4.9.4 documents the error envelope once, refers to it from every error status, with the messages as examples', () => {
    expect(document.components.schemas.ErrorResponse.required).toEqual(['code', 'message', 'data'])
    for (const { operation } of operations()) {
      for (const [status, shared] of Object.entries(operation.responses as Record<string, any>)) {
        const response = resolved(shared)
        if (status.startsWith('2') || (operation.operationId === 'getHealth' && status === '503')) continue
        // the exceptions of docs/api.md §1.2: a redirect has no body, a provider page is HTML
        if (status.startsWith('3')) continue
        if (PROVIDER_PAGES.has(`${operation.operationId} ${status}`)) {
          expect(Object.keys(response.content), `${operation.operationId} ${status}`).toEqual(['text/html'])
          continue
        }
        const media = response.content['application/json']
        expect(media.schema, `${operation.operationId} ${status}`).toEqual({
          $ref: '#/components/schemas/ErrorResponse',
        })
        for (const example of Object.values(media.examples as Record<string, any>)) {
          expect(example.value.code).toBe(Number(status))
        }
      }
    }
    const unauthorized = answer('/auth/me', 'get', '401').content['application/json'].examples
    expect(Object.values(unauthorized).map((example: any) => example.value.message)).toEqual([
      'Authorization header is missing',
      'Authorization header must have the form "Bearer <token>"',
      'Access token is invalid or expired',
      'Token is of the wrong type for this endpoint',
    ])
  })

  it('R4.9.5 documents the headers: Cache-Control, the rate-limit headers, Retry-After and WWW-Authenticate where they are sent', () => {
    const headers = (path: string, method: string, status: string) =>
      Object.keys(answer(path, method, status).headers ?? {})
    const rateLimit = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']
    expect(headers('/auth/register', 'post', '200')).toEqual(['Cache-Control', ...rateLimit])
    expect(headers('/auth/register', 'post', '429')).toEqual(['Retry-After', 'Cache-Control', ...rateLimit])
    // R8.4: login's answers never tell the count of failures
    expect(headers('/auth/login', 'post', '429')).toEqual(['Retry-After', 'Cache-Control'])
    expect(headers('/auth/login', 'post', '401')).toEqual(['Cache-Control'])
    expect(headers('/auth/refresh', 'post', '401')).toEqual([
      'Cache-Control',
      ...rateLimit,
      'WWW-Authenticate',
    ])
    expect(headers('/auth/me', 'get', '401')).toEqual(['Cache-Control', 'WWW-Authenticate'])
    const challenge = resolved(answer('/auth/me', 'get', '401').headers['WWW-Authenticate'])
    expect(challenge.schema.enum).toEqual(['Bearer', 'Bearer error="invalid_token"'])
    // defined once in components.headers, where several answers send it alike
    const noStore = answer('/auth/register', 'post', '200').headers['Cache-Control']
    expect(noStore).toEqual(answer('/auth/me', 'get', '401').headers['Cache-Control'])
    expect(noStore.$ref).toMatch(/^#\/components\/headers\/Cache-Control/)
    expect(resolved(noStore).schema.const).toBe('no-store')
    expect(headers('/auth/delete-refresh-token', 'post', '503')).toEqual(['Retry-After', 'Cache-Control'])
    expect(headers('/health', 'get', '200')).toEqual([])
  })

  it('R4.9.6 states the e-mail rule as the pattern the service applies, never as format: email, as docs/api.md prints it', async () => {
    expect(await readFile(new URL('../../docs/api.md', import.meta.url), 'utf8')).toContain(
      `  ${EMAIL_PATTERN}\n`,
    )
    const text = JSON.stringify(document)
    expect(text).not.toMatch(/"format":"email"/)
    const emails = [
      document.paths['/auth/register'].post.requestBody.content['application/json'].schema.properties.email,
      document.paths['/auth/login'].post.requestBody.content['application/json'].schema.properties.email,
      answer('/auth/me', 'get', '200').content['application/json'].schema.properties.data.properties.email,
    ]
    for (const email of emails) expect(email).toMatchObject({ type: 'string', pattern: EMAIL_PATTERN })
  })

  it('R4.9.4 types the success envelope as the error envelope (an integer code) and created_at as a date-time', () => {
    const me = answer('/auth/me', 'get', '200').content['application/json'].schema
    expect(me.properties.code).toEqual({ type: 'integer', enum: [200] })
    expect(document.components.schemas.ErrorResponse.properties.code.type).toBe('integer')
    expect(me.properties.data.properties.created_at).toMatchObject({ type: 'string', format: 'date-time' })
  })

  it('R4.9.8 refers to every schema it keeps among its components (Redocly no-unused-components is off for the two unmatched-request responses)', () => {
    const text = JSON.stringify(document.paths)
    for (const name of Object.keys(document.components.schemas)) {
      expect(text, name).toContain(`"#/components/schemas/${name}"`)
    }
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

  it('is one buffer prepared at its first request (the YAML at the first of its own): every request gets the same bytes, and nothing is serialized per request', async () => {
    const stringify = vi.spyOn(JSON, 'stringify')
    const bufferFrom = vi.spyOn(Buffer, 'from')
    const yamlDocuments = () =>
      bufferFrom.mock.calls.filter(
        ([value]) => typeof value === 'string' && value.startsWith('openapi: 3.1.0'),
      )
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
      const yaml = await Promise.all(
        [1, 2].map(() => service.app.inject({ method: 'GET', url: '/docs/yaml' })),
      )
      expect(yaml[0]?.body).toContain('openapi: 3.1.0')
      expect(yaml[1]?.body).toBe(yaml[0]?.body)
      // made once, at the first request for it, and kept
      expect(yamlDocuments()).toHaveLength(1)
      expect(stringify.mock.calls.filter(([value]) => (value as { openapi?: unknown })?.openapi)).toEqual([])
    } finally {
      stringify.mockRestore()
      bufferFrom.mockRestore()
    }
  })

  it("Swagger UI's files answer as a file server does (a validator, a 304, HEAD), and one it lacks is the service's 404", async () => {
    const css = await service.app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' })
    expect(css.statusCode).toBe(200)
    expect(css.headers['content-type']).toMatch(/^text\/css/)
    expect(Number(css.headers['content-length'])).toBe(css.rawPayload.length)
    expect(css.headers['x-content-type-options']).toBe('nosniff')
    const etag = css.headers.etag as string
    expect(etag).toBeTruthy()
    const again = await service.app.inject({
      method: 'GET',
      url: '/docs/static/swagger-ui.css',
      headers: { 'if-none-match': etag },
    })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    const head = await service.app.inject({ method: 'HEAD', url: '/docs/static/swagger-ui.css' })
    expect(head.statusCode).toBe(200)
    expect(head.headers['content-length']).toBe(css.headers['content-length'])
    expect(head.body).toBe('')
    const missing = await service.app.inject({ method: 'GET', url: '/docs/static/no-such-file.js' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ code: 404, data: null })
  })
})

describe('the document is built at its first request, not at start', () => {
  it('is not built while the app starts (its generator is not even set up), and is built once by the first request', async () => {
    const app = Fastify()
    const stringify = vi.spyOn(JSON, 'stringify')
    const documents = () =>
      stringify.mock.calls.filter(([value]) => (value as { openapi?: unknown })?.openapi)
    try {
      await registerOpenApi(app, { name: 'tessera', version: '0.0.0-test' })
      app.get(
        '/ping',
        { schema: { operationId: 'ping', response: { 200: { type: 'string' } } } },
        async () => 'pong',
      )
      await app.ready()
      expect(app.hasDecorator('swagger')).toBe(false)
      expect(documents()).toEqual([])
      const answers = await Promise.all([1, 2].map(() => app.inject({ method: 'GET', url: '/openapi.json' })))
      expect(answers[0]?.json().paths['/ping'].get.operationId).toBe('ping')
      expect(answers[1]?.body).toBe(answers[0]?.body)
      expect(documents()).toHaveLength(1)
    } finally {
      stringify.mockRestore()
      await app.close()
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
