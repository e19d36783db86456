import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ConfigError } from '../config/config-error.js'

/** Where METRICS_HOST and METRICS_PORT say the metrics are served. */
export interface MetricsListen {
  host: string
  port: number
}

/** The text of a scrape and its Content-Type. */
export interface MetricsPage {
  contentType: string
  body: string
}

export interface MetricsServer {
  /** `http://host:port/metrics`, with the port actually bound. */
  readonly url: string
  /** Stops listening; a scrape in progress finishes, idle connections are closed. */
  close(): Promise<void>
}

/** What the server tells the log when a scrape fails. */
export interface MetricsLog {
  warn(fields: Record<string, unknown>, message: string): void
}

/**
 * docs/api.md "Metrics": a node:http server of its own on METRICS_PORT, apart from the public app, that answers
 * `GET /metrics` (and HEAD) with `render()` and everything else with a 404 (or a 405 for another method on
 * /metrics), in plain text. A scrape that cannot be rendered is a 503 with one line, and a warning in the log.
 * Rejects with a ConfigError naming METRICS_PORT when it cannot listen (the port is taken).
 */
export async function startMetricsServer(
  listen: MetricsListen,
  render: () => Promise<MetricsPage>,
  log: MetricsLog,
): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?', 1)[0]
    const answer = (status: number, text: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers })
      response.end(request.method === 'HEAD' ? undefined : text)
    }
    if (path !== '/metrics') return answer(404, 'Not Found: metrics are served at /metrics\n')
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return answer(405, 'Method Not Allowed\n', { allow: 'GET, HEAD' })
    }
    render().then(
      (page) => {
        response.writeHead(200, { 'content-type': page.contentType, 'cache-control': 'no-store' })
        response.end(request.method === 'HEAD' ? undefined : page.body)
      },
      (error: unknown) => {
        log.warn({ err: error }, 'metrics could not be collected')
        answer(503, `metrics unavailable: ${error instanceof Error ? error.message : String(error)}\n`)
      },
    )
  })
  // a scraper that opens a connection and sends nothing is cut off; so is one that stays idle between scrapes
  server.headersTimeout = 5_000
  server.requestTimeout = 10_000
  await new Promise<void>((resolve, reject) => {
    const refuse = (error: Error) =>
      reject(new ConfigError('METRICS_PORT', `cannot be listened on at ${listen.host}: ${error.message}`))
    server.once('error', refuse)
    server.listen({ host: listen.host, port: listen.port }, () => {
      server.off('error', refuse)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
      }),
  }
}
