import { readFileSync } from 'node:fs'
import type { FastifyReply } from 'fastify'
import { PACKAGE_ROOT } from '../package-root.js'

// What the pages of the client package (the demo, the admin console) share: their built files, read once at start,
// and the way each is sent. Read synchronously: a few dozen of the package's own files, read while the app is built,
// before the port opens and with nothing to serve meanwhile, where each promised read is several round trips to
// libuv's threads on a cold start's path (docs/performance.md, issue 34).

/** The client package, in client/ at the root of the package. */
export const CLIENT_PACKAGE = new URL('client/', PACKAGE_ROOT)

export const HTML = 'text/html; charset=utf-8'
export const JAVASCRIPT = 'text/javascript; charset=utf-8'
export const CSS = 'text/css; charset=utf-8'

/** A built file's content, or null when it does not exist. */
export function readBuilt(file: URL): Buffer | null {
  try {
    return readFileSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

/**
 * Sends one file of a page under the page's Content-Security-Policy, with no Referer to anywhere, revalidated on
 * every load (so a rebuilt client or page is seen after a restart).
 */
export const sendPageFile = (reply: FastifyReply, policy: string, type: string, body: Buffer) =>
  reply
    .header('content-security-policy', policy)
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .type(type)
    .send(body)

/** The 503 of a file that is not built, with the envelope (R1.2) and the message that says how to build it. */
export const sendNotBuilt = (reply: FastifyReply, message: string) =>
  reply.code(503).type('application/json; charset=utf-8').send({ code: 503, message, data: null })
