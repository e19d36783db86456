import { connect, createServer, type Socket } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { getOnNewConnection, requestPids } from '../support/cluster.js'
import { fetchJson } from '../support/fetch-json.js'
import { type RunningService, runCli, startProcess } from '../support/process.js'
import { exchange } from '../support/raw-http.js'
import { freePort } from '../support/redis-server.js'
import { useTempDir } from '../support/temp-dir.js'
import { type Sample, sampleValue, scrape } from './prometheus-text.js'

const healthRequests = (samples: Sample[]) =>
  sampleValue(samples, 'tessera_http_requests_total', { route: '/health', method: 'GET', status: '200' })

describe('tessera serve with METRICS_PORT', () => {
  const dir = useTempDir('metrics')
  let running: RunningService | undefined
  afterEach(async () => {
    await running?.stop()
    running = undefined
  })
  /** `tessera serve` with `env` and a free METRICS_PORT (stopped after the test); the service and its metrics' URL. */
  const serveWithMetrics = async (env: Record<string, string> = {}) => {
    const port = await freePort()
    running = await startProcess({ DATA_DIR: dir.path, METRICS_PORT: String(port), ...env })
    return { service: running, metricsUrl: `http://127.0.0.1:${port}/metrics` }
  }

  it('R6.2.1 one process: the start-up line names the metrics URL; each port serves only its own', async () => {
    const { service, metricsUrl } = await serveWithMetrics()
    expect(service.stdout).toHaveLength(1)
    expect(JSON.parse(service.stdout[0] ?? '{}')).toMatchObject({ metricsUrl })
    expect(service.stdout[0]).toContain(`, metrics on ${metricsUrl})`)

    for (let i = 0; i < 3; i++) expect((await fetchJson(`${service.url}/health`)).status).toBe(200)
    expect(healthRequests(await scrape(metricsUrl))).toBe(3)
    // the public port answers /metrics as any unknown path; the metrics port serves no API
    const publicMetrics = await fetchJson(`${service.url}/metrics`)
    expect(publicMetrics.status).toBe(404)
    expect(publicMetrics.body).toMatchObject({ code: 404, data: null })
    expect((await fetch(new URL('/health', metricsUrl))).status).toBe(404)
    expect(await service.stop()).toBe(0)
  })

  it('R6.2.6 WORKERS=2: the primary serves the sum over both workers, which serve none of their own', async () => {
    const { service, metricsUrl } = await serveWithMetrics({ WORKERS: '2' })
    expect(service.stdout).toHaveLength(1)
    expect(service.stdout[0]).toContain(`2 workers, metrics on ${metricsUrl})`)
    expect(healthRequests(await scrape(metricsUrl))).toBeUndefined()

    for (let i = 0; i < 20; i++) expect(await getOnNewConnection(`${service.url}/health`)).toBe(200)
    // both workers answered some of them, and the sum is all of them
    expect(requestPids(service).size).toBe(2)
    const samples = await scrape(metricsUrl)
    expect(healthRequests(samples)).toBe(20)
    expect(
      sampleValue(samples, 'tessera_http_request_duration_seconds_count', {
        route: '/health',
        method: 'GET',
        status: '200',
      }),
    ).toBe(20)
    // process metrics add up over the workers too
    expect(sampleValue(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0)

    // scraped again, the counts do not double
    expect(healthRequests(await scrape(metricsUrl))).toBe(20)
    expect(await service.stop()).toBe(0)
  })

  it('R6.2.7 counts the open connections, those the limits close, and the requests refused before routing', async () => {
    const { service, metricsUrl } = await serveWithMetrics()
    const url = new URL(service.url)
    const idle: Socket[] = []
    try {
      for (let i = 0; i < 3; i++) {
        const socket = connect({ host: url.hostname, port: Number(url.port) })
        idle.push(socket)
        await new Promise((resolve) => socket.once('connect', resolve))
      }
      // the scrape's own connection is on the metrics port, not counted here; the service accepts in its own time
      await vi.waitFor(async () =>
        expect(sampleValue(await scrape(metricsUrl), 'tessera_connections_open')).toBe(3),
      )
    } finally {
      for (const socket of idle) socket.destroy()
    }

    // two Content-Length headers: Node's parser refuses the request (R1.13)
    const refused = await exchange(
      url.hostname,
      Number(url.port),
      'POST /auth/login HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    )
    expect(refused).toMatch(/^HTTP\/1\.1 400 /)
    // a path Fastify cannot decode: refused before routing too
    const undecodable = await exchange(
      url.hostname,
      Number(url.port),
      'GET /%zz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n',
    )
    expect(undecodable).toMatch(/^HTTP\/1\.1 400 /)
    // 40 pipelined requests: 32 answered, the 33rd 503 and the connection closed (R8.8)
    const pipelined = await exchange(
      url.hostname,
      Number(url.port),
      'GET /health HTTP/1.1\r\nHost: t\r\n\r\n'.repeat(40),
    )
    expect(pipelined.match(/HTTP\/1\.1 503 /g)).toHaveLength(1)

    const samples = await scrape(metricsUrl)
    const closed = (reason: string) => sampleValue(samples, 'tessera_connections_closed_total', { reason })
    expect(['shed', 'refused', 'overloaded', 'write_timeout'].map(closed)).toEqual([0, 0, 1, 0])
    const beforeRouting = (status: number) =>
      sampleValue(samples, 'tessera_http_refused_before_routing_total', { status: String(status) })
    expect([beforeRouting(400), beforeRouting(503)]).toEqual([2, 1])
    // none reached a route: the requests counted are the 32 answers of GET /health
    expect(healthRequests(samples)).toBe(32)
    await vi.waitFor(async () =>
      expect(sampleValue(await scrape(metricsUrl), 'tessera_connections_open')).toBe(0),
    )
  })

  it('R6.2.1 a metrics port already taken stops the start, WORKERS=2 too, with one line and exit 1', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()))
    const { port } = blocker.address() as { port: number }
    try {
      for (const workers of ['1', '2']) {
        const result = await runCli(['serve'], {
          DATA_DIR: dir.path,
          WORKERS: workers,
          METRICS_PORT: String(port),
        })
        expect(result.code, workers).toBe(1)
        expect(result.stderr).toMatch(
          /^tessera: METRICS_PORT cannot be listened on at 127\.0\.0\.1: .*EADDRINUSE.*\n$/,
        )
      }
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  })
})
