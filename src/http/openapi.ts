import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { DOCUMENT_DESCRIPTION, unmatchedRequestResponses } from './responses.js'
import { ownFilesOnlyPolicy } from './security-headers.js'
import { withSharedComponents } from './shared-components.js'

/**
 * docs/api.md R4.9.2: the policy of the /docs page and its assets. Swagger UI runs from its own files alone: no
 * inline script, one inline style allowed by its hash, no other origin; it fetches the document from this origin
 * only, and no page may frame it. The browser test (test/http/docs.browser.test.ts) fails on any violation.
 */
export const DOCS_CSP = ownFilesOnlyPolicy([
  // the one inline <style> of Swagger UI, in the SVG logo of its top bar (swagger-ui-standalone-preset.js), by hash
  "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
])

/**
 * The OpenAPI 3.1 document, generated from the route schemas that also validate the requests, at
 * GET /openapi.json, and Swagger UI at GET /docs, both under `basePath` like the routes. Must be registered before
 * the routes it describes, in their scope or a parent of it.
 *
 * The document is built and serialized once, at its first request (its YAML form at the first request of that form),
 * and every request is sent that same buffer (also at Swagger UI's own /docs/json and /docs/yaml): answering it costs no more than a small
 * JSON object.
 */
export async function registerOpenApi(
  app: FastifyInstance,
  info: { name: string; version: string },
  basePath = '',
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // BASE_PATH: the paths stay the specification's, the server says where they are (a relative URL: this host)
      servers: [{ url: basePath === '' ? '/' : basePath }],
      info: {
        title: info.name,
        version: info.version,
        description: DOCUMENT_DESCRIPTION,
      },
      tags: [
        { name: 'auth', description: 'Accounts and tokens' },
        { name: 'mfa', description: 'Second factors: authenticator apps, recovery codes, passkeys' },
        {
          name: 'admin',
          description: "Administering accounts and reading the audit trail: ADMIN_ROLE's accounts only",
        },
        { name: 'status', description: 'Health and information' },
        { name: 'site-config', description: 'Documentation-site presentation configuration' },
      ],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
        // 404 and 405: the answers of requests that match no operation
        responses: unmatchedRequestResponses(),
      },
    },
    refResolver: {
      // shared schemas appear under components.schemas by their $id (ErrorResponse)
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  })
  const prepared: { json: Buffer | null; yaml: Buffer | null } = { json: null, yaml: null }
  // made at the first request for it, not at start: a service serves requests long before anyone reads its document
  const sendJson = (_request: FastifyRequest, reply: FastifyReply) => {
    prepared.json ??= Buffer.from(JSON.stringify(withSharedComponents(app.swagger())))
    return reply.type('application/json; charset=utf-8').send(prepared.json)
  }
  // the YAML form, which only Swagger UI's /docs/yaml serves, is made at its first request too: serializing the
  // document as YAML costs more than every other step of a start together, for a page hardly anyone asks for
  const sendYaml = (_request: FastifyRequest, reply: FastifyReply) => {
    prepared.yaml ??= Buffer.from(app.swagger({ yaml: true }))
    return reply.type('application/x-yaml').send(prepared.yaml)
  }
  // the document and the page are served under BASE_PATH, like the routes they describe
  await app.register(
    async (docs) => {
      docs.addHook('onRoute', (route) => {
        if (route.url === `${basePath}/docs/json`) route.handler = sendJson
        if (route.url === `${basePath}/docs/yaml`) route.handler = sendYaml
      })
      // indexPrefix: the page links its own files by absolute paths, which must carry the prefix too
      await docs.register(swaggerUi, { routePrefix: '/docs', indexPrefix: basePath, staticCSP: DOCS_CSP })
      docs.get('/openapi.json', { schema: { hide: true } }, sendJson)
    },
    { prefix: basePath },
  )
}
