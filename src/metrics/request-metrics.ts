import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { Registry } from 'prom-client'
import { LatencySeries, type MetricValue, registerCollected } from './collected-metric.js'

/** The route label of a request that matched no route (a 404, a 405): one value, never the URL asked for. */
export const UNMATCHED_ROUTE = 'unmatched'

/** The series of one route: method, then status. */
type RouteSeries = Map<string, Map<number, LatencySeries>>

/** What counts the HTTP requests: Fastify's onResponse hook, registered by buildApp. */
export interface RequestMetrics {
  onResponse(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void
}

/**
 * Requests by route pattern, method and status, with their latency, and what the login and refresh answers mean
 * (docs/api.md "Metrics"), registered on `registry`. The hot path is two or three map lookups and one observation:
 * the latency is Fastify's own measure of the request (reply.elapsedTime), so no clock is read here. Logins,
 * refreshes and rate-limit refusals are read from the same counts at scrape time, so they cost nothing per request.
 */
export function createRequestMetrics(registry: Registry): RequestMetrics {
  const routes = new Map<string, RouteSeries>()

  const seriesOf = (route: string, method: string, status: number): LatencySeries => {
    let byMethod = routes.get(route)
    if (byMethod === undefined) {
      byMethod = new Map()
      routes.set(route, byMethod)
    }
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) {
      byStatus = new Map()
      byMethod.set(method, byStatus)
    }
    let series = byStatus.get(status)
    if (series === undefined) {
      series = new LatencySeries()
      byStatus.set(status, series)
    }
    return series
  }

  const eachSeries = function* () {
    for (const [route, byMethod] of routes) {
      for (const [method, byStatus] of byMethod) {
        for (const [status, series] of byStatus) yield { route, method, status, series }
      }
    }
  }

  /** Requests answered with `status` by POST on a route ending in `path` (under BASE_PATH when there is one). */
  const answered = (path: string, status: number): number => {
    let total = 0
    for (const [route, byMethod] of routes) {
      if (route.endsWith(path)) total += byMethod.get('POST')?.get(status)?.count ?? 0
    }
    return total
  }
  const outcomes = (path: string, byStatus: Record<string, number>): MetricValue[] =>
    Object.entries(byStatus).map(([outcome, status]) => ({
      labels: { outcome },
      value: answered(path, status),
    }))

  registerCollected(registry, {
    name: 'tessera_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    type: 'counter',
    collect: () =>
      [...eachSeries()].map(({ route, method, status, series }) => ({
        labels: { route, method, status },
        value: series.count,
      })),
  })
  registerCollected(registry, {
    name: 'tessera_http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its answer, by route pattern, method and status',
    type: 'histogram',
    collect: () =>
      [...eachSeries()].flatMap(({ route, method, status, series }) =>
        series.values('tessera_http_request_duration_seconds', { route, method, status }),
      ),
  })
  registerCollected(registry, {
    name: 'tessera_logins_total',
    help: 'Logins (POST /auth/login): succeeded (200), failed (401), throttled (429)',
    type: 'counter',
    collect: () => outcomes('/auth/login', { succeeded: 200, failed: 401, throttled: 429 }),
  })
  registerCollected(registry, {
    name: 'tessera_refreshes_total',
    help: 'Refreshes (POST /auth/refresh): succeeded (200), refused (401)',
    type: 'counter',
    collect: () => outcomes('/auth/refresh', { succeeded: 200, refused: 401 }),
  })
  registerCollected(registry, {
    name: 'tessera_rate_limited_total',
    help: 'Requests refused with 429 (rate limit or login throttle), by route pattern',
    type: 'counter',
    collect: () => {
      const byRoute = new Map<string, number>()
      for (const { route, status, series } of eachSeries()) {
        if (status === 429) byRoute.set(route, (byRoute.get(route) ?? 0) + series.count)
      }
      return [...byRoute].map(([route, value]) => ({ labels: { route }, value }))
    },
  })

  return {
    onResponse(request, reply, done) {
      seriesOf(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode).observe(
        reply.elapsedTime / 1000,
      )
      done()
    },
  }
}
