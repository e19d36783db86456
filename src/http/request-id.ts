import { randomBytes } from 'node:crypto'

/**
 * Request ids (the `reqId` of the log lines and the audit trail, docs/api.md §6) that are unique across processes,
 * workers, instances and restarts: a random prefix drawn once per process, then a counter. Fastify's own ids
 * (`req-1`, `req-2`, …) start again in every process, so two instances' log lines and audit events could not be told
 * apart. A counter costs nothing per request; a random id per request would.
 */
export function createRequestIdGenerator(): () => string {
  const prefix = randomBytes(6).toString('base64url')
  let count = 0
  return () => `${prefix}-${(++count).toString(36)}`
}
