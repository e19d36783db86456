import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** One request a receiver got. */
export interface ReceivedWebhook {
  /** The path and query string the request was posted to. */
  path: string
  headers: IncomingHttpHeaders
  /** The body, as the bytes came (UTF-8). */
  body: string
  /** What the receiver answered. */
  status: number
  /** Date.now() when it arrived. */
  at: number
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook`, for WEBHOOK_URLS. */
  readonly url: string
  readonly port: number
  /** Every request so far, oldest first (kept across stop() and start()). */
  readonly received: readonly ReceivedWebhook[]
  /** Answers every following request with `status` (2xx by default), after `delayMs`. */
  answer(status: number, delayMs?: number): void
  /** Stops listening and ends open connections: the port refuses connections until start(). */
  stop(): Promise<void>
  /** Listens again on the same port. */
  start(): Promise<void>
}

/**
 * A real HTTP server on 127.0.0.1 that takes webhook posts, keeps each with its headers and body, and answers as told
 * (204 by default); it can be stopped and started again on the same port (a receiver that is down for a while).
 */
export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = []
  let status = 204
  let delayMs = 0
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()
  let server: Server
  let port = 0

  const handle = (headers: IncomingHttpHeaders, url: string, body: string, response: ServerResponse) => {
    const answered = status
    const reply = () => {
      received.push({ path: url, headers, body, status: answered, at: Date.now() })
      response.writeHead(answered, { 'content-type': 'text/plain' }).end('ok')
    }
    if (delayMs === 0) reply()
    else {
      const timer = setTimeout(() => {
        timers.delete(timer)
        reply()
      }, delayMs)
      timers.add(timer)
    }
  }

  const listen = async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () =>
        handle(request.headers, request.url ?? '', Buffer.concat(chunks).toString('utf8'), response),
      )
    })
    server.on('connection', (socket) => {
      sockets.add(socket)
      socket.once('close', () => sockets.delete(socket))
    })
    server.listen(port, '127.0.0.1')
    await once(server, 'listening')
    port = (server.address() as AddressInfo).port
  }
  await listen()

  return {
    get url() {
      return `http://127.0.0.1:${port}${path}`
    },
    get port() {
      return port
    },
    received,
    answer(next, delay = 0) {
      status = next
      delayMs = delay
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
    start: listen,
  }
}
