import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { LazyChildLogger } from '../../src/http/request-log.js'
import { backends } from '../support/backends.js'
import { call } from '../support/http.js'
import { apiPath, startTestService } from '../support/test-service.js'

function capture() {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)))
      done()
    },
  })
  return { logger: pino({ level: 'info' }, stream), lines }
}

describe('LazyChildLogger', () => {
  it('makes no child until something logs through it', () => {
    const { logger } = capture()
    let children = 0
    const parent = Object.assign(Object.create(logger), {
      child: (...args: Parameters<typeof logger.child>) => {
        children++
        return logger.child(...args)
      },
    })
    const log = new LazyChildLogger(parent, { reqId: 'req-1' }, {})
    expect(log.level).toBe('info')
    expect(children).toBe(0)
    log.warn('one')
    log.error('two')
    expect(children).toBe(1)
  })

  it('writes what a child would: the bindings, the object and the message', async () => {
    const { logger, lines } = capture()
    const log = new LazyChildLogger(logger, { reqId: 'req-7' }, {})
    log.info({ code: 'X' }, 'hello')
    log.debug('below the level')
    await new Promise((resolve) => setImmediate(resolve))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ level: 30, reqId: 'req-7', code: 'X', msg: 'hello' })
  })
})

describe('RequestLogController', () => {
  it('writes one line per request: its id, method, path without the query, status and client address, no header', async () => {
    const service = await startTestService(backends[0]!)
    try {
      const token = 'not-a-token-but-secret'
      await call(service.app, 'GET', '/auth/me', {
        headers: { authorization: `Bearer ${token}` },
        query: { access_token: token },
      })
      const lines = service
        .logs()
        .filter((record) => record.msg === 'request' && record.path === apiPath('/auth/me'))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatchObject({
        level: 30,
        reqId: expect.any(String),
        method: 'GET',
        statusCode: 401,
        clientAddress: '127.0.0.1',
        durationMs: expect.any(Number),
      })
      expect(service.logLines.join('\n')).not.toContain(token)
    } finally {
      await service.close()
    }
  })
})
