import { readdir, readFile } from 'node:fs/promises'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ADMIN_CONSOLE_CSP,
  adminConsoleRoutes,
  CONSOLE_NOT_BUILT,
} from '../../src/routes/admin-console-routes.js'
import { CLIENT_NOT_BUILT } from '../../src/routes/demo-routes.js'
import { backends } from '../support/backends.js'
import { startTestService, type TestService } from '../support/test-service.js'

// docs/api.md §4.28: GET /admin and its files, as the client's build writes them, and ADMIN_CONSOLE.

const file = (path: string) => readFile(new URL(`../../${path}`, import.meta.url))
const BUILT = new URL('../../client/dist/admin/', import.meta.url)

describe('GET /admin and its files', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
  })
  afterAll(() => service?.close())

  it.each([
    ['/admin', 'text/html; charset=utf-8', 'client/dist/admin/index.html'],
    ['/admin/assets/console.js', 'text/javascript; charset=utf-8', 'client/dist/admin/console.js'],
    ['/admin/assets/console.css', 'text/css; charset=utf-8', 'client/dist/admin/console.css'],
    ['/admin/assets/client.js', 'text/javascript; charset=utf-8', 'client/dist/index.js'],
  ])('R4.28.2 %s is served as it is, under the strict policy', async (url, type, path) => {
    const response = await service.app.inject({ url })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe(type)
    expect(response.headers['content-security-policy']).toBe(ADMIN_CONSOLE_CSP)
    expect(response.headers['x-content-type-options']).toBe('nosniff')
    expect(response.headers['referrer-policy']).toBe('no-referrer')
    expect(response.headers['cache-control']).toBe('no-cache')
    expect(response.rawPayload.equals(await file(path))).toBe(true)
  })

  it('R4.28.2 every module the build wrote is served under /admin/assets/, and no other name', async () => {
    const modules = (await readdir(BUILT)).filter((name) => name.endsWith('.js'))
    // the page's own modules, not one script
    expect(modules).toEqual(expect.arrayContaining(['console.js', 'admin-api.js', 'sign-in.js']))
    for (const name of modules) {
      const response = await service.app.inject({ url: `/admin/assets/${name}` })
      expect(response.statusCode, name).toBe(200)
      expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8')
      expect(response.rawPayload.equals(await file(`client/dist/admin/${name}`))).toBe(true)
    }
    for (const url of ['/admin/assets/index.html', '/admin/assets/nothing.js', '/admin/assets/', '/admin/']) {
      const response = await service.app.inject({ url })
      expect(response.statusCode, url).toBe(404)
      expect(response.json()).toEqual({ code: 404, message: 'Not found', data: null })
    }
  })

  it.each(['index.html', 'console.css'])(
    'the built %s is the one of client/admin/, as it is',
    async (name) => {
      expect((await file(`client/dist/admin/${name}`)).equals(await file(`client/admin/${name}`))).toBe(true)
    },
  )

  it('R4.28.2 the policy allows no inline script, no other origin, no form target and no framing', () => {
    expect(ADMIN_CONSOLE_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
  })

  it('is not in the OpenAPI document', async () => {
    const document = (await service.app.inject({ url: '/openapi.json' })).json()
    expect(
      Object.keys(document.paths).filter((path) => path === '/admin' || path.startsWith('/admin/assets')),
    ).toEqual([])
  })
})

describe('R4.28.1 ADMIN_CONSOLE turns the console on or off (off by default in production)', () => {
  it.each([
    [{}, 200],
    [{ ADMIN_CONSOLE: 'false' }, 404],
    [{ NODE_ENV: 'production' }, 404],
    [{ NODE_ENV: 'production', ADMIN_CONSOLE: 'true' }, 200],
  ])('%j: %i', async (env, status) => {
    const service = await startTestService(backends[0]!, { env })
    try {
      for (const url of [
        '/admin',
        '/admin/assets/console.js',
        '/admin/assets/console.css',
        '/admin/assets/client.js',
      ]) {
        const response = await service.app.inject({ url })
        expect(response.statusCode, url).toBe(status)
        if (status === 404) expect(response.json()).toEqual({ code: 404, message: 'Not found', data: null })
      }
    } finally {
      await service.close()
    }
  })
})

describe('R4.28.3 without the built console', () => {
  it('serves a page that says so, with its style, and GET /admin/assets/console.js answers 503', async () => {
    const app = Fastify()
    await app.register(adminConsoleRoutes, { pageFolder: new URL('./no-such-build/', import.meta.url) })
    try {
      const page = await app.inject({ url: '/admin' })
      expect(page.statusCode).toBe(200)
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(page.headers['content-security-policy']).toBe(ADMIN_CONSOLE_CSP)
      expect(page.rawPayload.equals(await file('client/admin/not-built.html'))).toBe(true)
      expect(page.body.replace(/\s+/g, ' ')).toContain(CONSOLE_NOT_BUILT)
      expect(page.body).not.toContain('<script')

      const style = await app.inject({ url: '/admin/assets/console.css' })
      expect(style.statusCode).toBe(200)
      expect(style.rawPayload.equals(await file('client/admin/console.css'))).toBe(true)

      const script = await app.inject({ url: '/admin/assets/console.js' })
      expect(script.statusCode).toBe(503)
      expect(script.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(script.json()).toEqual({ code: 503, message: CONSOLE_NOT_BUILT, data: null })
      expect(CONSOLE_NOT_BUILT).toBe(
        'The admin console is not built: run "npm run build -w @tessera/client", then restart the service',
      )
    } finally {
      await app.close()
    }
  })

  it('serves the page, and GET /admin/assets/client.js answers 503 saying how to build the library', async () => {
    const app = Fastify()
    await app.register(adminConsoleRoutes, {
      clientFile: new URL('./no-such-client/index.js', import.meta.url),
    })
    try {
      expect((await app.inject({ url: '/admin' })).statusCode).toBe(200)
      expect((await app.inject({ url: '/admin/assets/console.js' })).statusCode).toBe(200)
      const response = await app.inject({ url: '/admin/assets/client.js' })
      expect(response.statusCode).toBe(503)
      expect(response.json()).toEqual({ code: 503, message: CLIENT_NOT_BUILT, data: null })
    } finally {
      await app.close()
    }
  })
})
