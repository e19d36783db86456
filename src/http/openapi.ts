import type { SwaggerOptions } from '@fastify/swagger'
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type RouteOptions,
} from 'fastify'
import { memoizeSuccess } from '../memoize-success.js'
import { DOCUMENT_DESCRIPTION, unmatchedRequestResponses } from './responses.js'
import { sharedSchemaController } from './schema-compilers.js'
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
 * and every request is sent that same buffer (also at Swagger UI's own /docs/json and /docs/yaml): answering it costs
 * no more than a small JSON object.
 *
 * Neither the generator (@fastify/swagger) nor Swagger UI (@fastify/swagger-ui, @fastify/static) is loaded at start:
 * the routes are noted as they are added, and at the first request for the document or the page, an app of their
 * own (the docs app) is given the same routes and shared schemas to describe, and serves Swagger UI's page and files,
 * which this app hands on to it. Set up at start they were some 8 % of a development start (docs/performance.md,
 * issue 34), for a document few starts are ever asked for.
 */
export async function registerOpenApi(
  app: FastifyInstance,
  info: { name: string; version: string },
  basePath = '',
): Promise<void> {
  // the routes to describe, as they are added: what @fastify/swagger reads of each, this module's own left out
  const routes: DescribedRoute[] = []
  app.addHook('onRoute', ({ method, url, schema, config, constraints, handler }) => {
    if (!own.has(handler)) routes.push({ method, url, schema, config, constraints })
  })
  const openDocs = memoizeSuccess(() => docsApp(app, routes, info, basePath))
  const json = memoizeSuccess(async () =>
    Buffer.from(JSON.stringify(withSharedComponents((await openDocs()).swagger()))),
  )
  // the YAML form, which only Swagger UI's /docs/yaml serves, is made at its first request too: serializing the
  // document as YAML costs more than every other step of a start together, for a page hardly anyone asks for
  const yaml = memoizeSuccess(async () => Buffer.from((await openDocs()).swagger({ yaml: true })))
  const sendJson = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.type('application/json; charset=utf-8').send(await json())
  const sendYaml = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.type('application/x-yaml').send(await yaml())
  // the page and its files: what the docs app answers, with its status, headers and bytes; a file it does not have
  // is this service's 404, as for any other path
  const sendUi = async (request: FastifyRequest, reply: FastifyReply) => {
    const answer = await (await openDocs()).inject({
      method: 'GET',
      url: request.url,
      headers: request.headers,
    })
    if (answer.statusCode === 404) return reply.callNotFound()
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !NOT_HANDED_ON.has(name)) reply.header(name, value)
    }
    return reply.code(answer.statusCode).send(answer.rawPayload)
  }
  const own = new Set<unknown>([sendJson, sendYaml, sendUi])
  const hidden = { schema: { hide: true } }
  // the document and the page are served under BASE_PATH, like the routes they describe
  await app.register(
    async (scope) => {
      scope.get('/openapi.json', hidden, sendJson)
      scope.get('/docs/json', hidden, sendJson)
      scope.get('/docs/yaml', hidden, sendYaml)
      scope.get('/docs', hidden, sendUi)
      scope.get('/docs/*', hidden, sendUi)
    },
    { prefix: basePath },
  )
}

/** A route of the service as the docs app is given it. */
type DescribedRoute = Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config' | 'constraints'>

/** The headers of the docs app's answers that this app's own answer sets itself. */
const NOT_HANDED_ON = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'])

/** What the docs app's routes answer: nothing, ever; they are there to be described, not called. */
const describedOnly = async () => {
  throw new Error('the docs app describes the routes: it does not serve them')
}

/**
 * The docs app: @fastify/swagger, given the service's routes (with the HEAD routes Fastify added, which it leaves
 * out of the document as it did in the service) and shared schemas, and Swagger UI under BASE_PATH. The schemas are
 * compiled by the service's lazy compilers, that is never: its routes are not called.
 */
async function docsApp(
  service: FastifyInstance,
  routes: readonly DescribedRoute[],
  info: { name: string; version: string },
  basePath: string,
): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
  ])
  const docs = Fastify({ logger: false, exposeHeadRoutes: false, schemaController: sharedSchemaController })
  for (const schema of Object.values(service.getSchemas())) docs.addSchema(schema)
  await docs.register(swagger, documentOptions(info, basePath))
  for (const route of routes) docs.route({ ...route, handler: describedOnly })
  await docs.register(
    async (scope) => {
      // indexPrefix: the page links its own files by absolute paths, which must carry the prefix too
      await scope.register(swaggerUi, { routePrefix: '/docs', indexPrefix: basePath, staticCSP: DOCS_CSP })
    },
    { prefix: basePath },
  )
  await docs.ready()
  return docs
}

/** @fastify/swagger's options: the document's head, and the shared schemas under components.schemas by their $id. */
function documentOptions(info: { name: string; version: string }, basePath: string): SwaggerOptions {
  return {
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
  }
}
