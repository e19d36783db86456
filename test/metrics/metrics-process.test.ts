import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { getOnNewConnection, requestPids } from '../support/cluster.js'
import { fetchJson } from '../support/fetch-json.js'
import { type RunningService, runCli, startProcess } from '../support/process.js'
import { freePort } from '../support/redis-server.js'
import { type Sample, sampleValue, scrape } from './prometheus-text.js'

const healthRequests = (samples: Sample[]) =>
  sampleValue(samples, 'tessera_http_requests_total', { route: '/health', method: 'GET', status: '200' })

describe('tessera serve with METRICS_PORT', () => {
  let dir: string
  let service: RunningService | undefined
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-metrics-'))
  })
  afterEach(async () => {
    await service?.stop()
    service = undefined
    await rm(dir, { recursive: true, force: true })
  })

  it('R6.2.1 one process: the start-up line names the metrics URL; each port serves only its own', async () => {
    const port = await freePort()
    service = await startProcess({ DATA_DIR: dir, METRICS_PORT: String(port) })
    const metricsUrl = `http://127.0.0.1:${port}/metrics`
    expect(service.stdout).toHaveLength(1)
    expect(JSON.parse(service.stdout[0] ?? '{}')).toMatchObject({ metricsUrl })
    expect(service.stdout[0]).toContain(`, metrics on ${metricsUrl})`)

    for (let i = 0; i < 3; i++) expect((await fetchJson(`${service.url}/health`)).status).toBe(200)
    expect(healthRequests(await scrape(metricsUrl))).toBe(3)
    // the public port answers /metrics as any unknown path; the metrics port serves no API
    const publicMetrics = await fetchJson(`${service.url}/metrics`)
    expect(publicMetrics.status).toBe(404)
    expect(publicMetrics.body).toMatchObject({ code: 404, data: null })
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(404)
    expect(await service.stop()).toBe(0)
  })

  it('R6.2.6 WORKERS=2: the primary serves the sum over both workers, which serve none of their own', async () => {
    const port = await freePort()
    service = await startProcess({ DATA_DIR: dir, WORKERS: '2', METRICS_PORT: String(port) })
    const metricsUrl = `http://127.0.0.1:${port}/metrics`
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

  it('R6.2.1 a metrics port already taken stops the start, WORKERS=2 too, with one line and exit 1', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()))
    const { port } = blocker.address() as { port: number }
    try {
      for (const workers of ['1', '2']) {
        const result = await runCli(['serve'], {
          DATA_DIR: dir,
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
