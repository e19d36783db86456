import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { oncePerTurn } from '../batched-reads.js'
import type { Clock } from '../clock.js'
import { healthResponses, infoResponses } from '../http/responses.js'
import type { HealthProbe } from '../storage/stores.js'

export interface StatusRoutesOptions {
  probes: Readonly<Record<string, HealthProbe>>
  healthTimeoutMs: number
  appInfo: { name: string; version: string }
  clock: Clock
}

/** spec 4.1 and 4.2, plain objects without the envelope. */
export const statusRoutes: FastifyPluginAsyncTypebox<StatusRoutesOptions> = async (app, options) => {
  const { probes, healthTimeoutMs, appInfo, clock } = options
  // the GET /health requests of one turn share one check of each store, started once they have all arrived: under a
  // load balancer's probes nothing changes, under a flood the stores are asked once a turn instead of once a request
  const checkStores = oncePerTurn(async () => {
    const names = Object.keys(probes)
    const results = await Promise.all(names.map((name) => answersWithin(probes[name], healthTimeoutMs)))
    const checks = Object.fromEntries(names.map((name, i) => [name, results[i] === true]))
    return { ok: results.every(Boolean), checks }
  })

  app.get(
    '/health',
    {
      schema: {
        operationId: 'getHealth',
        tags: ['status'],
        summary: 'Whether every dependency answers (503 when one does not)',
        description:
          'Asks every store the service depends on (the database, and Redis when configured), each within HEALTH_TIMEOUT_MS, and names each in checks. 200 with status ok when all answer, 503 with status unavailable otherwise: a load balancer takes the instance out of rotation.',
        security: [],
        response: healthResponses(),
      },
    },
    async (_request, reply) => {
      const { ok, checks } = await checkStores()
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks })
    },
  )

  app.get(
    '/info',
    {
      schema: {
        operationId: 'getInfo',
        tags: ['status'],
        summary: 'Application name, version and run state',
        description:
          'The name and version of the running service, its run state and the current time in Unix seconds.',
        security: [],
        response: infoResponses(),
      },
    },
    async () => ({
      name: appInfo.name,
      version: appInfo.version,
      status: 'running',
      timestamp: Math.floor(clock.now() / 1000),
    }),
  )
}

/** True when the probe resolves within the timeout; a probe that hangs or fails is false. */
async function answersWithin(probe: HealthProbe | undefined, timeoutMs: number): Promise<boolean> {
  if (!probe) return false
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs)
  })
  try {
    return await Promise.race([probe().then(() => true), timeout])
  } catch {
    return false
  } finally {
    clearTimeout(timer)
  }
}
