import { afterEach, describe, expect, it } from 'vitest'
import type { Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { withInjectedFailures } from '../support/failing-stores.js'
import { call, PASSWORD, uniqueEmail } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'

// issue 11, "Log floods" (docs/api.md §6): an expected refusal writes its request line and nothing more; a failure
// nobody foresaw keeps its error line with the stack.

/** What a request line takes, with room: id, method, path, status, duration, client address, pino's fields. */
const LINE_BYTES = 320

/** The log bytes and lines written while `flood` runs. */
async function logged(service: TestService, flood: () => Promise<unknown>) {
  const before = service.logLines.length
  await flood()
  const lines = service.logLines.slice(before)
  return { lines, bytes: lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0) }
}

describe('hostile clients: log floods', () => {
  let service: TestService
  afterEach(() => service?.close())

  it('R6.1 a flood of 503s from a full Argon2 queue writes one short line per refusal, without a stack', async () => {
    service = await startTestService(backends[0]!, {
      env: { AUTH_HASH_CONCURRENCY: '1', AUTH_HASH_QUEUE_LIMIT: '0', AUTH_ARGON2_MEMORY_KIB: '8192' },
    })
    const requests = 60
    let statuses: number[] = []
    const { lines, bytes } = await logged(service, async () => {
      const replies = await Promise.all(
        Array.from({ length: requests }, () =>
          call(service.app, 'POST', '/auth/register', { body: { email: uniqueEmail(), password: PASSWORD } }),
        ),
      )
      statuses = replies.map((reply) => reply.status)
    })
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(requests / 2)
    // a registration let through also logs its security event (docs/api.md R6.3.2); a refusal nothing more
    const served = statuses.filter((status) => status === 200).length
    expect(lines.length).toBeLessThanOrEqual(requests + served)
    expect(bytes).toBeLessThanOrEqual((requests + served) * LINE_BYTES)
    expect(lines.filter((line) => line.includes('"stack"'))).toEqual([])
  })

  it('R6.1 a flood of 429s writes one short line per refusal, without a stack', async () => {
    service = await startTestService(backends[0]!, { env: { RATE_LIMIT_PER_MINUTE: '2' } })
    const requests = 60
    const statuses: number[] = []
    const { lines, bytes } = await logged(service, async () => {
      for (let i = 0; i < requests; i++) {
        const reply = await call(service.app, 'POST', '/auth/refresh', {
          body: { refresh_token: 'not-a-token' },
        })
        statuses.push(reply.status)
      }
    })
    expect(statuses.filter((status) => status === 429)).toHaveLength(requests - 2)
    // the two let through are refused as invalid tokens and log that security event (docs/api.md R6.3.2)
    expect(lines.length).toBeLessThanOrEqual(requests + 2)
    expect(bytes).toBeLessThanOrEqual((requests + 2) * LINE_BYTES)
    expect(lines.filter((line) => line.includes('"stack"'))).toEqual([])
  })

  it('R7.1 an unexpected 500 still logs the error with its stack', async () => {
    let failing = false
    service = await startTestService(backends[0]!, {
      wrapStores: (stores: Stores) => withInjectedFailures(stores, () => failing),
    })
    failing = true
    const { lines } = await logged(service, () =>
      call(service.app, 'POST', '/auth/login', { body: { email: uniqueEmail(), password: PASSWORD } }),
    )
    const errors = lines.map((line) => JSON.parse(line)).filter((record) => record.level === 50)
    expect(errors).toHaveLength(1)
    expect(errors[0].err.stack).toMatch(/StorageError/)
  })
})
