import type { Worker } from 'node:cluster'
import { EventEmitter } from 'node:events'
import { Counter, Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import { createClusterMetrics } from '../../src/metrics/cluster-metrics.js'
import { type MetricsServer, startMetricsServer } from '../../src/metrics/metrics-server.js'
import { sampleValue, scrape } from './prometheus-text.js'

/**
 * A stand-in for a cluster worker, to inject what a real one cannot be made to do on demand: answer late, never, with
 * an error, or exit mid-scrape. One that behaves answers with a real registry's JSON, as answerMetricsRequests does.
 */
class FakeWorker extends EventEmitter {
  readonly process = { pid: 4242 }
  constructor(private readonly behave: (request: { id: number }, worker: FakeWorker) => void) {
    super()
  }
  send(message: { id: number }, callback: (error: Error | null) => void): boolean {
    callback(null)
    setImmediate(() => this.behave(message, this))
    return true
  }
}

const answering = (requests: number) => {
  const registry = new Registry()
  new Counter({ name: 'tessera_test_total', help: 'a count', registers: [registry] }).inc(requests)
  return new FakeWorker((request, worker) =>
    registry
      .getMetricsAsJSON()
      .then((metrics) => worker.emit('message', { type: 'tessera:metrics', id: request.id, metrics })),
  )
}
const asWorkers = (workers: FakeWorker[]) => () => workers as unknown as Worker[]
const log = {
  warnings: [] as unknown[],
  warn(fields: unknown) {
    this.warnings.push(fields)
  },
}

describe('R6.2.6 the primary of WORKERS > 1 serves the sum over its workers', () => {
  let server: MetricsServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
    log.warnings.length = 0
  })
  const serve = async (workers: FakeWorker[]) => {
    server = await startMetricsServer(
      { host: '127.0.0.1', port: 0 },
      createClusterMetrics(asWorkers(workers)),
      log,
    )
    return server.url
  }

  it('adds up what every worker counts', async () => {
    const url = await serve([answering(3), answering(4)])
    expect(sampleValue(await scrape(url), 'tessera_test_total')).toBe(7)
  })

  it('leaves out a worker that exits before it answers', async () => {
    const exiting = new FakeWorker((_request, worker) => worker.emit('exit', 1, null))
    const url = await serve([answering(3), exiting])
    expect(sampleValue(await scrape(url), 'tessera_test_total')).toBe(3)
  })

  it('answers 503 with one line when a worker fails to collect, and logs a warning', async () => {
    const failing = new FakeWorker((request, worker) =>
      worker.emit('message', { type: 'tessera:metrics', id: request.id, error: 'collect exploded' }),
    )
    const response = await fetch(await serve([answering(3), failing]))
    expect(response.status).toBe(503)
    expect(await response.text()).toBe('metrics unavailable: a worker failed to collect: collect exploded\n')
    expect(log.warnings).toHaveLength(1)
  })

  it('answers 503 when a worker does not answer within 3 seconds, and the next scrape works again', async () => {
    let silent = true
    const sometimes = new FakeWorker((request, worker) => {
      if (!silent) answeringWorkerReply(request, worker)
    })
    const url = await serve([answering(3), sometimes])
    const response = await fetch(url)
    expect(response.status).toBe(503)
    expect(await response.text()).toBe('metrics unavailable: worker 4242 did not answer within 3000 ms\n')
    silent = false
    expect(sampleValue(await scrape(url), 'tessera_test_total')).toBe(3)
  })
})

/** A worker's answer with no metrics of its own: what one that has counted nothing yet sends. */
function answeringWorkerReply(request: { id: number }, worker: FakeWorker): void {
  worker.emit('message', { type: 'tessera:metrics', id: request.id, metrics: [] })
}
