import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { createConcurrencyLimiter } from '../../src/auth/concurrency-limiter.js'
import { ServiceBusyError } from '../../src/errors.js'
import { createArgon2Metrics } from '../../src/metrics/argon2-metrics.js'
import { createRequestMetrics } from '../../src/metrics/request-metrics.js'
import { parsePrometheusText, sampleValue } from './prometheus-text.js'

/** The samples a scrape of `registry` would serve. */
const samplesOf = async (registry: Registry) => parsePrometheusText(await registry.metrics())

describe('the request metrics, fed answers the flow of metrics.test.ts does not give', () => {
  const answer = (
    metrics: ReturnType<typeof createRequestMetrics>,
    route: string | undefined,
    method: string,
    status: number,
  ) =>
    metrics.onResponse(
      { routeOptions: { url: route }, method } as FastifyRequest,
      { statusCode: status, elapsedTime: 1.5 } as FastifyReply,
      () => {},
    )

  it('R6.2.3 a login 429 is throttled and a rate-limit refusal of its route; its 400, 500 and 503 are requests only', async () => {
    const registry = new Registry()
    const metrics = createRequestMetrics(registry)
    // under a BASE_PATH, as the routes are registered
    for (const status of [429, 429, 400, 500, 503]) answer(metrics, '/v1/auth/login', 'POST', status)
    answer(metrics, '/v1/auth/refresh', 'POST', 503)
    // not POST: not a login
    answer(metrics, '/v1/auth/login', 'GET', 200)
    const samples = await samplesOf(registry)
    const logins = (outcome: string) => sampleValue(samples, 'tessera_logins_total', { outcome })
    expect([logins('succeeded'), logins('failed'), logins('throttled')]).toEqual([0, 0, 2])
    const refreshes = (outcome: string) => sampleValue(samples, 'tessera_refreshes_total', { outcome })
    expect([refreshes('succeeded'), refreshes('refused')]).toEqual([0, 0])
    expect(sampleValue(samples, 'tessera_rate_limited_total', { route: '/v1/auth/login' })).toBe(2)
    const requests = (route: string, method: string, status: number) =>
      sampleValue(samples, 'tessera_http_requests_total', { route, method, status: String(status) })
    expect([400, 500, 503].map((status) => requests('/v1/auth/login', 'POST', status))).toEqual([1, 1, 1])
    expect(requests('/v1/auth/refresh', 'POST', 503)).toBe(1)
    expect(requests('/v1/auth/login', 'GET', 200)).toBe(1)
  })

  it('R6.2.2 a request that matched no route, a 404 or a 405, has the route "unmatched", with its latency', async () => {
    const registry = new Registry()
    const metrics = createRequestMetrics(registry)
    answer(metrics, undefined, 'GET', 404)
    answer(metrics, undefined, 'DELETE', 405)
    const samples = await samplesOf(registry)
    const unmatched = (method: string, status: string) => ({ route: 'unmatched', method, status })
    expect(sampleValue(samples, 'tessera_http_requests_total', unmatched('GET', '404'))).toBe(1)
    expect(sampleValue(samples, 'tessera_http_requests_total', unmatched('DELETE', '405'))).toBe(1)
    // 1.5 ms: in the bucket up to 2.5 ms, not in the one up to 1 ms
    const bucket = (le: string) =>
      sampleValue(samples, 'tessera_http_request_duration_seconds_bucket', { ...unmatched('GET', '404'), le })
    expect([bucket('0.001'), bucket('0.0025'), bucket('+Inf')]).toEqual([0, 1, 1])
    expect(sampleValue(samples, 'tessera_http_request_duration_seconds_sum', unmatched('GET', '404'))).toBe(
      0.0015,
    )
  })
})

describe('the Argon2 queue metrics of a busy queue', () => {
  it('R6.2.5 counts the computations running and waiting now, how long each waited, and those refused', async () => {
    const registry = new Registry()
    const argon2 = createArgon2Metrics(registry)
    const limiter = createConcurrencyLimiter({ concurrency: 1, queueLimit: 1, observer: argon2.observer })
    argon2.watch(limiter)
    let open!: () => void
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const running = limiter.run(() => gate)
    const waiting = limiter.run(async () => {})
    await expect(limiter.run(async () => {})).rejects.toBeInstanceOf(ServiceBusyError)

    const busy = await samplesOf(registry)
    expect(sampleValue(busy, 'tessera_argon2_running')).toBe(1)
    expect(sampleValue(busy, 'tessera_argon2_queue_depth')).toBe(1)
    expect(sampleValue(busy, 'tessera_argon2_refused_total')).toBe(1)
    // the first found its slot free at once
    expect(sampleValue(busy, 'tessera_argon2_queue_wait_seconds_count')).toBe(1)
    expect(sampleValue(busy, 'tessera_argon2_queue_wait_seconds_bucket', { le: '0' })).toBe(1)

    await sleep(20)
    open()
    await Promise.all([running, waiting])
    const idle = await samplesOf(registry)
    expect(sampleValue(idle, 'tessera_argon2_running')).toBe(0)
    expect(sampleValue(idle, 'tessera_argon2_queue_depth')).toBe(0)
    // the second waited for the first, about 20 ms
    expect(sampleValue(idle, 'tessera_argon2_queue_wait_seconds_count')).toBe(2)
    expect(sampleValue(idle, 'tessera_argon2_queue_wait_seconds_bucket', { le: '0' })).toBe(1)
    expect(sampleValue(idle, 'tessera_argon2_queue_wait_seconds_bucket', { le: '0.01' })).toBe(1)
    expect(sampleValue(idle, 'tessera_argon2_queue_wait_seconds_bucket', { le: '+Inf' })).toBe(2)
  })
})
