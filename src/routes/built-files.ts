import { readFile } from 'node:fs/promises'
import type { FastifyReply } from 'fastify'
import { PACKAGE_ROOT } from '../package-root.js'

// What the pages of the client package (the demo, the admin console) share: their built files, read once at start,
// and the way each is sent.

/** The client package, in client/ at the root of the package. */
export const CLIENT_PACKAGE = new URL('client/', PACKAGE_ROOT)

export const HTML = 'text/html; charset=utf-8'
export const JAVASCRIPT = 'text/javascript; charset=utf-8'
export const CSS = 'text/css; charset=utf-8'

/** A built file's content, or null when it does not exist. */
export const readBuilt = (file: URL): Promise<Buffer | null> =>
  readFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null
    throw error
  })

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
