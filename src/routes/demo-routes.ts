import { readFileSync } from 'node:fs'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { ownFilesOnlyPolicy } from '../http/security-headers.js'
import {
  CLIENT_PACKAGE,
  CSS,
  HTML,
  JAVASCRIPT,
  readBuilt,
  sendNotBuilt,
  sendPageFile,
} from './built-files.js'

/**
 * The policy of the demo page and its files, as strict as the one of /docs (docs/api.md R4.9.2): scripts and styles
 * from this origin only and no inline script, requests to this origin only (the page calls the service it is served
 * by), no form that submits anywhere (the page's script handles them; without it, a form would put the password in
 * the URL), no `<base>`, and no page may frame it.
 */
export const DEMO_CSP = ownFilesOnlyPolicy()

/**
 * What `GET /demo/client.js` (and `/demo/passkeys.js`) answers while client/dist/index.js (client/dist/passkeys.js)
 * does not exist (R1.2's envelope).
 */
export const CLIENT_NOT_BUILT =
  'The client library is not built: run "npm run build -w @tessera/client", then restart the service'

/**
 * What the page says, and `GET /demo/demo.js` answers (R1.2's envelope), while the demo is not built: client/dist/demo/
 * lacks one of its files. client/demo/not-built.html says it in the same words.
 */
export const DEMO_NOT_BUILT =
  'The demo page is not built: run "npm run build -w @tessera/client", then restart the service'

export interface DemoRoutesOptions {
  /** The built page: index.html, demo.js and demo.css; by default client/dist/demo/. */
  pageFolder?: URL
  /** The built client, one ES module without imports; by default client/dist/index.js. */
  clientFile?: URL
  /** The client's second entry point, its passkeys (`@tessera/client/passkeys`); by default client/dist/passkeys.js. */
  passkeysFile?: URL
}

const PAGE_FOLDER = new URL('dist/demo/', CLIENT_PACKAGE)
const CLIENT_FILE = new URL('dist/index.js', CLIENT_PACKAGE)
const PASSKEYS_FILE = new URL('dist/passkeys.js', CLIENT_PACKAGE)
/** The demo's sources: not-built.html, and the style it shares with the page. */
const SOURCE_FOLDER = new URL('demo/', CLIENT_PACKAGE)

/**
 * The files of the page: the built ones when all three exist; otherwise client/demo/not-built.html and the
 * sources' demo.css, and no script.
 */
function readPage(folder: URL): { page: Buffer; script: Buffer | null; style: Buffer } {
  const [page, script, style] = ['index.html', 'demo.js', 'demo.css'].map((name) =>
    readBuilt(new URL(name, folder)),
  )
  if (page && script && style) return { page, script, style }
  return {
    page: readFileSync(new URL('not-built.html', SOURCE_FOLDER)),
    script: null,
    style: readFileSync(new URL('demo.css', SOURCE_FOLDER)),
  }
}

/**
 * GET /demo: a page that uses the client library (`@tessera/client`) with localStorage to register, log in, call a
 * protected endpoint and log out, showing the tokens' state. Served when DEMO_PAGE is on (outside production by
 * default). The page is the client package's (client/demo/), served as the client's build writes it:
 * client/dist/demo/ (index.html, demo.js from demo.ts, demo.css) and the library client/dist/index.js as
 * `/demo/client.js`, beside the page's script, which imports it from there, with its passkeys (client/dist/passkeys.js)
 * as `/demo/passkeys.js`. Every file is read once, when the app is built, and each request is sent that same buffer.
 *
 * When the client is not built, the page still loads and says so. Not built means one of two things:
 * - client/dist/demo/ lacks a file (the client never built, or built before the demo was part of its build): `/demo`
 *   is client/demo/not-built.html, a page without a script that says DEMO_NOT_BUILT, styled by the sources'
 *   demo.css (`/demo/demo.css`); `/demo/demo.js` answers 503 with the envelope and DEMO_NOT_BUILT.
 * - client/dist/index.js does not exist (the page is built): the page loads, its script fails to import
 *   `/demo/client.js`, which answers 503 with the envelope and CLIENT_NOT_BUILT, and the page shows that message.
 *   Without client/dist/passkeys.js alone, `/demo/passkeys.js` answers the same, and the page goes without passkeys.
 */
export const demoRoutes: FastifyPluginAsync<DemoRoutesOptions> = async (app, options) => {
  const { page, script, style } = readPage(options.pageFolder ?? PAGE_FOLDER)
  const client = readBuilt(options.clientFile ?? CLIENT_FILE)
  const passkeys = readBuilt(options.passkeysFile ?? PASSKEYS_FILE)

  const send = (reply: FastifyReply, type: string, body: Buffer) => sendPageFile(reply, DEMO_CSP, type, body)
  const notBuilt = sendNotBuilt

  const hide = { schema: { hide: true } }
  app.get('/demo', hide, (_request, reply) => send(reply, HTML, page))
  app.get('/demo/demo.js', hide, (_request, reply) =>
    script !== null ? send(reply, JAVASCRIPT, script) : notBuilt(reply, DEMO_NOT_BUILT),
  )
  app.get('/demo/demo.css', hide, (_request, reply) => send(reply, CSS, style))
  app.get('/demo/client.js', hide, (_request, reply) =>
    client !== null ? send(reply, JAVASCRIPT, client) : notBuilt(reply, CLIENT_NOT_BUILT),
  )
  app.get('/demo/passkeys.js', hide, (_request, reply) =>
    passkeys !== null ? send(reply, JAVASCRIPT, passkeys) : notBuilt(reply, CLIENT_NOT_BUILT),
  )
}
