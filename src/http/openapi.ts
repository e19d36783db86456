import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'

/**
 * The OpenAPI 3.1 document, generated from the route schemas that also validate the requests, at
 * GET /openapi.json, and Swagger UI at GET /docs. Must be registered before the routes it describes.
 */
export async function registerOpenApi(
  app: FastifyInstance,
  info: { name: string; version: string },
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: info.name,
        version: info.version,
        description:
          'Account and token service: registration, login, short-lived JWT access tokens and single-use refresh tokens.',
      },
      tags: [
        { name: 'auth', description: 'Accounts and tokens' },
        { name: 'status', description: 'Health and information' },
        { name: 'site-config', description: 'Documentation-site presentation configuration' },
      ],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    refResolver: {
      // shared schemas appear under components.schemas by their $id (ErrorResponse)
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
