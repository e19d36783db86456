import { readFile } from 'node:fs/promises'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLIENT_NOT_BUILT, DEMO_CSP, DEMO_NOT_BUILT, demoRoutes } from '../../src/routes/demo-routes.js'
import { backends } from '../support/backends.js'
import { startTestService, type TestService } from '../support/test-service.js'

const file = (path: string) => readFile(new URL(`../../${path}`, import.meta.url))

describe('GET /demo and its files', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
  })
  afterAll(() => service?.close())

  it.each([
    ['/demo', 'text/html; charset=utf-8', 'client/dist/demo/index.html'],
    ['/demo/demo.js', 'text/javascript; charset=utf-8', 'client/dist/demo/demo.js'],
    ['/demo/demo.css', 'text/css; charset=utf-8', 'client/dist/demo/demo.css'],
    ['/demo/client.js', 'text/javascript; charset=utf-8', 'client/dist/index.js'],
    ['/demo/passkeys.js', 'text/javascript; charset=utf-8', 'client/dist/passkeys.js'],
  ])('%s is served as it is, under the strict policy', async (url, type, path) => {
    const response = await service.app.inject({ url })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe(type)
    expect(response.headers['content-security-policy']).toBe(DEMO_CSP)
    expect(response.headers['x-content-type-options']).toBe('nosniff')
    expect(response.headers['cache-control']).toBe('no-cache')
    expect(response.rawPayload.equals(await file(path))).toBe(true)
  })

  it.each(['index.html', 'demo.css'])('the built %s is the one of client/demo/, as it is', async (name) => {
    expect((await file(`client/dist/demo/${name}`)).equals(await file(`client/demo/${name}`))).toBe(true)
  })

  it('the policy allows no inline script, no other origin, no form target and no framing', () => {
    expect(DEMO_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
  })

  it('is not in the OpenAPI document', async () => {
    const document = (await service.app.inject({ url: '/openapi.json' })).json()
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/demo'))).toEqual([])
  })
})

describe('DEMO_PAGE turns the page on or off (off by default in production)', () => {
  it.each([
    [{}, 200],
    [{ DEMO_PAGE: 'false' }, 404],
    [{ NODE_ENV: 'production' }, 404],
    [{ NODE_ENV: 'production', DEMO_PAGE: 'true' }, 200],
  ])('%j: %i', async (env, status) => {
    const service = await startTestService(backends[0]!, { env })
    try {
      for (const url of [
        '/demo',
        '/demo/demo.js',
        '/demo/demo.css',
        '/demo/client.js',
        '/demo/passkeys.js',
      ]) {
        expect((await service.app.inject({ url })).statusCode).toBe(status)
      }
    } finally {
      await service.close()
    }
  })
})

describe('without the built client', () => {
  it('serves the page, and GET /demo/client.js answers 503 saying how to build it', async () => {
    const app = Fastify()
    await app.register(demoRoutes, { clientFile: new URL('./no-such-client/index.js', import.meta.url) })
    try {
      expect((await app.inject({ url: '/demo' })).statusCode).toBe(200)
      const response = await app.inject({ url: '/demo/client.js' })
      expect(response.statusCode).toBe(503)
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(response.json()).toEqual({ code: 503, message: CLIENT_NOT_BUILT, data: null })
      expect(CLIENT_NOT_BUILT).toBe(
        'The client library is not built: run "npm run build -w @tessera/client", then restart the service',
      )
    } finally {
      await app.close()
    }
  })

  it('GET /demo/passkeys.js, the passkeys entry point, answers the same 503 while it is not built', async () => {
    const app = Fastify()
    await app.register(demoRoutes, { passkeysFile: new URL('./no-such-client/passkeys.js', import.meta.url) })
    try {
      expect((await app.inject({ url: '/demo/client.js' })).statusCode).toBe(200)
      const response = await app.inject({ url: '/demo/passkeys.js' })
      expect(response.statusCode).toBe(503)
      expect(response.json()).toEqual({ code: 503, message: CLIENT_NOT_BUILT, data: null })
    } finally {
      await app.close()
    }
  })
})

describe('without the built demo', () => {
  it('serves a page that says so, with its style, and GET /demo/demo.js answers 503 saying how to build it', async () => {
    const app = Fastify()
    await app.register(demoRoutes, { pageFolder: new URL('./no-such-build/', import.meta.url) })
    try {
      const page = await app.inject({ url: '/demo' })
      expect(page.statusCode).toBe(200)
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(page.headers['content-security-policy']).toBe(DEMO_CSP)
      expect(page.headers['cache-control']).toBe('no-cache')
      expect(page.rawPayload.equals(await file('client/demo/not-built.html'))).toBe(true)
      expect(page.body.replace(/\s+/g, ' ')).toContain(DEMO_NOT_BUILT)
      expect(page.body).not.toContain('<script')

      const style = await app.inject({ url: '/demo/demo.css' })
      expect(style.statusCode).toBe(200)
      expect(style.headers['content-type']).toBe('text/css; charset=utf-8')
      expect(style.rawPayload.equals(await file('client/demo/demo.css'))).toBe(true)

      const script = await app.inject({ url: '/demo/demo.js' })
      expect(script.statusCode).toBe(503)
      expect(script.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(script.json()).toEqual({ code: 503, message: DEMO_NOT_BUILT, data: null })
      expect(DEMO_NOT_BUILT).toBe(
        'The demo page is not built: run "npm run build -w @tessera/client", then restart the service',
      )

      // the library is served as long as it is built
      expect((await app.inject({ url: '/demo/client.js' })).statusCode).toBe(200)
    } finally {
      await app.close()
    }
  })
})
