import { readFile } from 'node:fs/promises'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { ownFilesOnlyPolicy } from '../http/security-headers.js'

/**
 * The policy of the demo page and its files, as strict as the one of /docs (docs/api.md R4.9.2): scripts and styles
 * from this origin only and no inline script, requests to this origin only (the page calls the service it is served
 * by), no form that submits anywhere (the page's script handles them; without it, a form would put the password in
 * the URL), no `<base>`, and no page may frame it.
 */
export const DEMO_CSP = ownFilesOnlyPolicy()

/** What `GET /demo/client.js` answers while client/dist/index.js does not exist (R1.2's envelope). */
export const CLIENT_NOT_BUILT =
  'The client library is not built: run "npm run build -w @tessera/client", then restart the service'

export interface DemoRoutesOptions {
  /** The folder of index.html, demo.js and demo.css; by default src/demo/, which dist/routes/ reaches the same way. */
  pageFolder?: URL
  /** The built client, one ES module without imports; by default client/dist/index.js. */
  clientFile?: URL
}

// from src/routes/ and dist/routes/ alike, two levels up is the repository (as migrations/ is found)
const PAGE_FOLDER = new URL('../../src/demo/', import.meta.url)
const CLIENT_FILE = new URL('../../client/dist/index.js', import.meta.url)

const HTML = 'text/html; charset=utf-8'
const JAVASCRIPT = 'text/javascript; charset=utf-8'
const CSS = 'text/css; charset=utf-8'

/**
 * GET /demo: a page that uses the client library (`@tessera/client`) with localStorage to register, log in, call a
 * protected endpoint and log out, showing the tokens' state. Served when DEMO_PAGE is on (outside production by
 * default). Every file is read once, when the app is built, and each request is sent that same buffer. When the
 * client is not built, the page still loads and says so, and `/demo/client.js` answers 503 with the envelope.
 */
export const demoRoutes: FastifyPluginAsync<DemoRoutesOptions> = async (app, options) => {
  const folder = options.pageFolder ?? PAGE_FOLDER
  const [page, script, style] = await Promise.all(
    ['index.html', 'demo.js', 'demo.css'].map((name) => readFile(new URL(name, folder))),
  )
  const client = await readFile(options.clientFile ?? CLIENT_FILE).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null
    throw error
  })

  const send = (reply: FastifyReply, type: string, body: Buffer | undefined) =>
    reply
      .header('content-security-policy', DEMO_CSP)
      .header('referrer-policy', 'no-referrer')
      // revalidated on every load, so a rebuilt client or page is seen after a restart
      .header('cache-control', 'no-cache')
      .type(type)
      .send(body)

  const hide = { schema: { hide: true } }
  app.get('/demo', hide, (_request, reply) => send(reply, HTML, page))
  app.get('/demo/demo.js', hide, (_request, reply) => send(reply, JAVASCRIPT, script))
  app.get('/demo/demo.css', hide, (_request, reply) => send(reply, CSS, style))
  app.get('/demo/client.js', hide, (_request, reply) => {
    if (client !== null) return send(reply, JAVASCRIPT, client)
    return reply
      .code(503)
      .type('application/json; charset=utf-8')
      .send({ code: 503, message: CLIENT_NOT_BUILT, data: null })
  })
}
