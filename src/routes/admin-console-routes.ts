import { readdirSync, readFileSync } from 'node:fs'
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
import { CLIENT_NOT_BUILT } from './demo-routes.js'

/**
 * The policy of the console and its files, the demo's (docs/api.md R4.28.2): scripts and styles from this origin only
 * and no inline script, requests to this origin only, no form that submits anywhere, no `<base>`, no framing (an
 * admin's clicks cannot be lured through a frame).
 */
export const ADMIN_CONSOLE_CSP = ownFilesOnlyPolicy()

/**
 * What the page says, and `GET /admin/assets/console.js` answers (R1.2's envelope), while the console is not built:
 * client/dist/admin/ lacks one of its files. client/admin/not-built.html says it in the same words.
 */
export const CONSOLE_NOT_BUILT =
  'The admin console is not built: run "npm run build -w @tessera/client", then restart the service'

export interface AdminConsoleRoutesOptions {
  /** The built console: index.html, its modules (console.js first) and console.css; by default client/dist/admin/. */
  pageFolder?: URL
  /** The built client, one ES module without imports; by default client/dist/index.js. */
  clientFile?: URL
}

const PAGE_FOLDER = new URL('dist/admin/', CLIENT_PACKAGE)
const CLIENT_FILE = new URL('dist/index.js', CLIENT_PACKAGE)
/** The console's sources: not-built.html, and the style it shares with the page. */
const SOURCE_FOLDER = new URL('admin/', CLIENT_PACKAGE)
/** The files the page needs, whatever else its build writes. */
const REQUIRED = ['index.html', 'console.js', 'console.css']
/** A file served under /admin/assets/: a module or a style sheet, by a name that is one path segment. */
const ASSET_NAME = /^[a-z0-9][a-z0-9-]*\.(js|css)$/

/** The files of a built console, by name: the HTML page, and its modules and style sheet. */
function readBuiltFolder(folder: URL): Map<string, Buffer> | null {
  let names: string[]
  try {
    names = readdirSync(folder)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  if (!REQUIRED.every((name) => names.includes(name))) return null
  // client.js is the library's name beside the modules
  const served = names.filter(
    (name) => name === 'index.html' || (ASSET_NAME.test(name) && name !== 'client.js'),
  )
  return new Map(served.map((name) => [name, readFileSync(new URL(name, folder))]))
}

/**
 * GET /admin: the admin console (docs/api.md §4.28), a page that signs an admin in with the client library
 * (`@tessera/client`) and works the admin API (`/admin/users`, `/admin/audit`). Served when ADMIN_CONSOLE is on
 * (outside production by default). The page is the client package's (client/admin/), served as the client's build
 * writes it: client/dist/admin/index.html as `/admin`, each module and the style sheet of client/dist/admin/ as
 * `/admin/assets/<name>`, and the library client/dist/index.js as `/admin/assets/client.js`, beside the page's
 * modules, which import it from there. Every file is read once, when the app is built, and each request is sent that
 * same buffer; a name the build did not write is the usual 404.
 *
 * When the console is not built (client/dist/admin/ lacks index.html, console.js or console.css), `/admin` is
 * client/admin/not-built.html, a page without a script that says CONSOLE_NOT_BUILT, styled by the sources'
 * console.css; `/admin/assets/console.js` answers 503 with the envelope and CONSOLE_NOT_BUILT. Without
 * client/dist/index.js, `/admin/assets/client.js` answers 503 with CLIENT_NOT_BUILT, which the page shows.
 */
export const adminConsoleRoutes: FastifyPluginAsync<AdminConsoleRoutesOptions> = async (app, options) => {
  const built = readBuiltFolder(options.pageFolder ?? PAGE_FOLDER)
  const client = readBuilt(options.clientFile ?? CLIENT_FILE)
  const files =
    built ??
    new Map([
      ['index.html', readFileSync(new URL('not-built.html', SOURCE_FOLDER))],
      ['console.css', readFileSync(new URL('console.css', SOURCE_FOLDER))],
    ])

  const send = (reply: FastifyReply, type: string, body: Buffer) =>
    sendPageFile(reply, ADMIN_CONSOLE_CSP, type, body)
  const hide = { schema: { hide: true } }
  const page = files.get('index.html') as Buffer
  app.get('/admin', hide, (_request, reply) => send(reply, HTML, page))
  for (const [name, body] of files) {
    if (name === 'index.html') continue
    const type = name.endsWith('.css') ? CSS : JAVASCRIPT
    app.get(`/admin/assets/${name}`, hide, (_request, reply) => send(reply, type, body))
  }
  if (built === null)
    app.get('/admin/assets/console.js', hide, (_request, reply) => sendNotBuilt(reply, CONSOLE_NOT_BUILT))
  app.get('/admin/assets/client.js', hide, (_request, reply) =>
    client !== null ? send(reply, JAVASCRIPT, client) : sendNotBuilt(reply, CLIENT_NOT_BUILT),
  )
}
