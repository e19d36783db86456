import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { registerOpenApi } from '../../src/http/openapi.js'
import { ajvOptions } from '../../src/http/validation.js'
import { siteConfigRoutes } from '../../src/routes/site-config-routes.js'
import type { SiteConfig } from '../../src/site-config/site-config-schema.js'
import { siteConfigSchemaDocument } from '../../src/site-config/site-config-schema.js'

// The routes are not in buildApp's table yet; this app has what matters to them: the service's Ajv options, the
// TypeBox type provider and the same @fastify/swagger set-up (OpenAPI 3.1).
let app: FastifyInstance | undefined

async function appWith(siteConfig: SiteConfig | null): Promise<FastifyInstance> {
  app = Fastify({ ajv: ajvOptions }).withTypeProvider<TypeBoxTypeProvider>()
  await registerOpenApi(app, { name: 'tessera', version: '0.0.0-test' })
  await app.register(siteConfigRoutes, { siteConfig })
  await app.ready()
  return app
}

afterEach(async () => {
  await app?.close()
  app = undefined
})

/** A configuration with extra properties at several levels, which the response must keep. */
const CONFIG = {
  toc: { maxLevel: 3, collapseControl: { enabled: true, icon: 'chevron' }, sticky: true },
  footer: { beian: { text: '京ICP备12345678号', url: 'https://beian.miit.gov.cn/', target: '_blank' } },
  sitemap: { changefreq: 'weekly' as const, exclude: ['/drafts/'] },
  theme: { accent: '#0af', fonts: ['Inter', 'Noto Sans SC'] },
}

describe('GET /site-config', () => {
  it('returns the configured object, extra properties included', async () => {
    const response = await (await appWith(CONFIG)).inject({ method: 'GET', url: '/site-config' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.json()).toEqual(CONFIG)
  })

  it('returns {} when no configuration is set', async () => {
    const response = await (await appWith(null)).inject({ method: 'GET', url: '/site-config' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.body).toBe('{}')
  })
})

describe('GET /site-config/schema', () => {
  it('returns the schema document as application/schema+json', async () => {
    const response = await (await appWith(null)).inject({ method: 'GET', url: '/site-config/schema' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/schema+json; charset=utf-8')
    expect(response.json()).toEqual(siteConfigSchemaDocument())
  })
})

describe('the site-config routes in the OpenAPI document', () => {
  it('lists both routes under the site-config tag, with a schema that describes the object', async () => {
    const served = await (await appWith(CONFIG)).inject({ method: 'GET', url: '/openapi.json' })
    const document = served.json() as {
      openapi: string
      paths: Record<string, { get?: Record<string, unknown> }>
    }
    expect(document.openapi).toBe('3.1.0')

    const config = document.paths['/site-config']?.get
    expect(config).toMatchObject({ tags: ['site-config'], summary: expect.any(String) })
    const configSchema = (config as { responses: Record<string, unknown> }).responses['200']
    expect(configSchema).toMatchObject({
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: {
              toc: {
                properties: {
                  maxLevel: { type: 'integer', minimum: 1, maximum: 6 },
                  collapseControl: { type: 'object', properties: { enabled: { type: 'boolean' } } },
                },
              },
              footer: { properties: { beian: { type: 'object', properties: { url: { type: 'string' } } } } },
            },
          },
        },
      },
    })
    // no reference that would resolve against the OpenAPI document instead of the schema document
    expect(JSON.stringify(configSchema)).not.toContain('$ref')
    expect(JSON.stringify(configSchema)).not.toContain('$defs')

    expect(document.paths['/site-config/schema']?.get).toMatchObject({
      tags: ['site-config'],
      summary: expect.any(String),
      responses: { 200: { content: { 'application/schema+json': { schema: { type: 'object' } } } } },
    })
  })

  it('is served at GET /openapi.json', async () => {
    const response = await (await appWith(null)).inject({ method: 'GET', url: '/openapi.json' })
    expect(response.statusCode).toBe(200)
    expect(Object.keys(response.json().paths)).toEqual(
      expect.arrayContaining(['/site-config', '/site-config/schema']),
    )
  })
})
