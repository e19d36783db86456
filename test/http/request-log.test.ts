import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { LazyChildLogger } from '../../src/http/request-log.js'

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
