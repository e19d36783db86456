import type { Worker } from 'node:cluster'
import { AggregatorRegistry, type Registry } from 'prom-client'
import type { MetricsPage } from './metrics-server.js'

/** The primary's question to a worker, and the worker's answer: its registry as prom-client's JSON. */
interface MetricsRequest {
  type: 'tessera:metrics-request'
  id: number
}
interface MetricsAnswer {
  type: 'tessera:metrics'
  id: number
  metrics?: unknown[]
  error?: string
}

const isRequest = (message: unknown): message is MetricsRequest =>
  (message as MetricsRequest | null)?.type === 'tessera:metrics-request'
const isAnswer = (message: unknown): message is MetricsAnswer =>
  (message as MetricsAnswer | null)?.type === 'tessera:metrics'

/** How long the primary waits for every worker's answer before the scrape fails. */
const ANSWER_TIMEOUT_MS = 3_000

/**
 * In a worker of WORKERS > 1: answers the primary's requests for this process's metrics. The workers serve none of
 * their own. Returns what stops answering.
 */
export function answerMetricsRequests(registry: Registry): () => void {
  const onMessage = (message: unknown) => {
    if (!isRequest(message)) return
    const reply = (answer: Omit<MetricsAnswer, 'type' | 'id'>) =>
      process.send?.({ type: 'tessera:metrics', id: message.id, ...answer } satisfies MetricsAnswer)
    registry.getMetricsAsJSON().then(
      (metrics) => reply({ metrics }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    )
  }
  process.on('message', onMessage)
  return () => process.off('message', onMessage)
}

/**
 * In the primary of WORKERS > 1: what GET /metrics serves, the sum over `workers` (those that listen) by
 * prom-client's cluster aggregation: counters and histograms add up, and each default process metric combines as
 * prom-client says (memory adds up, event-loop lag is averaged). A worker that exits meanwhile is left out; one that
 * does not answer within ANSWER_TIMEOUT_MS fails the scrape.
 */
export function createClusterMetrics(workers: () => Iterable<Worker>): () => Promise<MetricsPage> {
  let nextId = 0
  return async () => {
    const id = nextId++
    const asked = [...workers()]
    const answers = await Promise.all(asked.map((worker) => ask(worker, id)))
    const registry = AggregatorRegistry.aggregate(answers.filter((answer) => answer !== null))
    return { contentType: registry.contentType, body: await registry.metrics() }
  }
}

/** One worker's metrics as JSON; null when it exits before answering. */
function ask(worker: Worker, id: number): Promise<unknown[] | null> {
  return new Promise((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer)
      worker.off('message', onMessage)
      worker.off('exit', onExit)
    }
    const onMessage = (message: unknown) => {
      if (!isAnswer(message) || message.id !== id) return
      finish()
      if (message.error !== undefined) reject(new Error(`a worker failed to collect: ${message.error}`))
      else resolve(message.metrics ?? [])
    }
    const onExit = () => {
      finish()
      resolve(null)
    }
    const timer = setTimeout(() => {
      finish()
      reject(new Error(`worker ${worker.process.pid} did not answer within ${ANSWER_TIMEOUT_MS} ms`))
    }, ANSWER_TIMEOUT_MS)
    worker.on('message', onMessage)
    worker.on('exit', onExit)
    const request: MetricsRequest = { type: 'tessera:metrics-request', id }
    worker.send(request, (error: Error | null) => {
      if (error) onExit()
    })
  })
}
