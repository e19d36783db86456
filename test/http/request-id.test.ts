import { describe, expect, it } from 'vitest'
import { createRequestIdGenerator } from '../../src/http/request-id.js'
import { backends } from '../support/backends.js'
import { call } from '../support/http.js'
import { startTestService } from '../support/test-service.js'

describe('request ids (docs/api.md R6.1)', () => {
  it('differ between processes: a random prefix per generator, then a counter', () => {
    const one = createRequestIdGenerator()
    const other = createRequestIdGenerator()
    const ids = [one(), one(), one(), other(), other()]
    expect(new Set(ids).size).toBe(5)
    expect(ids[0]).toMatch(/^[\w-]{8}-1$/)
    expect(ids[1]).toBe(ids[0]!.replace(/-1$/, '-2'))
    expect(ids[3]!.slice(0, 8)).not.toBe(ids[0]!.slice(0, 8))
  })

  it("are the request log line's reqId, one per request, and not those of another service", async () => {
    const [first, second] = await Promise.all([
      startTestService(backends[0]!),
      startTestService(backends[0]!),
    ])
    try {
      for (const service of [first, second]) {
        await call(service.app, 'GET', '/health')
        await call(service.app, 'GET', '/info')
      }
      const requestIds = (service: typeof first) =>
        service
          .logs()
          .filter((record) => record.msg === 'request')
          .map((record) => String(record.reqId))
      const ids = [...requestIds(first), ...requestIds(second)]
      expect(ids).toHaveLength(4)
      expect(new Set(ids).size).toBe(4)
    } finally {
      await Promise.all([first.close(), second.close()])
    }
  })
})
