import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { unforeseenFailure } from '../http/responses.js'
import { type SiteConfig, siteConfigSchemaDocument } from '../site-config/site-config-schema.js'

export interface SiteConfigRoutesOptions {
  /** The validated configuration from SITE_CONFIG_FILE, or null when none is configured. */
  siteConfig: SiteConfig | null
}

/** The published schema document is JSON Schema; this media type lets a client tell it from ordinary JSON. */
const SCHEMA_MEDIA_TYPE = 'application/schema+json'

// The bodies are plain JSON.stringify: the generated fast-json-stringify serializer would keep only the properties
// a schema lists, and spec 2.6 lets every level carry properties of its own, which must reach the client.
const stringify = () => (data: unknown) => JSON.stringify(data)

/** spec 2.6: the site presentation configuration and its JSON Schema, both public. */
export const siteConfigRoutes: FastifyPluginAsyncTypebox<SiteConfigRoutesOptions> = async (app, options) => {
  const siteConfig = options.siteConfig ?? {}
  const document = siteConfigSchemaDocument()

  app.get(
    '/site-config',
    {
      schema: {
        operationId: 'getSiteConfig',
        tags: ['site-config'],
        summary: 'The site presentation configuration ({} when none is configured)',
        description:
          "The documentation site's presentation configuration of SITE_CONFIG_FILE, validated when the service started, with any additional properties it holds; {} when no file is configured.",
        security: [],
        response: {
          200: {
            description: 'The configuration, extra properties included; {} when none is configured',
            content: { 'application/json': { schema: Type.Unsafe<SiteConfig>(forOpenApi(document)) } },
          },
          500: unforeseenFailure(),
        },
      },
      serializerCompiler: stringify,
    },
    async () => siteConfig,
  )

  app.get(
    '/site-config/schema',
    {
      schema: {
        operationId: 'getSiteConfigSchema',
        tags: ['site-config'],
        summary: 'The JSON Schema (2020-12) of the site presentation configuration',
        description:
          'The schema every site presentation configuration is validated against, as application/schema+json, for editors and other tools that check such files.',
        security: [],
        response: {
          200: {
            description: 'The schema document',
            content: {
              [SCHEMA_MEDIA_TYPE]: {
                schema: Type.Unsafe<Record<string, unknown>>({
                  type: 'object',
                  description: `A JSON Schema 2020-12 document, $id ${String(document.$id)}`,
                }),
              },
            },
          },
          500: unforeseenFailure(),
        },
      },
      serializerCompiler: stringify,
    },
    async (_request, reply) => reply.type(SCHEMA_MEDIA_TYPE).send(document),
  )
}

/**
 * The schema as an OpenAPI 3.1 response schema: `$ref`s to `$defs` replaced by their targets and the document
 * keywords dropped, because @fastify/swagger would resolve `#/$defs/...` against the OpenAPI document, not this one.
 */
function forOpenApi(document: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _schema, $id: _id, $defs, ...root } = document
  const definitions = ($defs ?? {}) as Record<string, unknown>
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline)
    if (node === null || typeof node !== 'object') return node
    const { $ref, ...rest } = node as Record<string, unknown>
    const target = typeof $ref === 'string' ? definitions[$ref.replace('#/$defs/', '')] : undefined
    const merged = target ? { ...(target as Record<string, unknown>), ...rest } : node
    return Object.fromEntries(Object.entries(merged).map(([key, value]) => [key, inline(value)]))
  }
  return inline(root) as Record<string, unknown>
}
