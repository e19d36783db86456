import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createServer, type RequestListener, type Server } from 'node:http'
import { type AddressInfo, connect, type Socket } from 'node:net'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { defaultMaxConnections, guardConnections } from '../../src/http/connection-guard.js'
import { trustedProxies } from '../../src/http/trusted-proxies.js'
import { exchange } from '../support/raw-http.js'

// docs/api.md §8: how src/http/connection-guard.ts counts client addresses and sizes its default cap. The floods
// themselves: test/hostile/connections.test.ts and test/hostile/pipelining.test.ts.

describe('connection-guard', () => {
  it('R8.7 MAX_CONNECTIONS defaults to the file-descriptor limit less 128, at most 10,000', () => {
    expect(defaultMaxConnections(1_024)).toBe(896)
    expect(defaultMaxConnections(1_048_576)).toBe(10_000)
    expect(defaultMaxConnections(100)).toBe(16)
    expect(defaultMaxConnections(null)).toBe(10_000)
  })

  describe('on a server', () => {
    let server: Server
    const sockets: Socket[] = []
    afterEach(async () => {
      for (const socket of sockets.splice(0)) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    })

    async function start(
      trustProxy: string[],
      handler: RequestListener = (_request, response) => response.end('ok'),
      limits = {
        maxConnections: 100 as number | null,
        maxConnectionsPerAddress: 2,
        openFileLimit: null as number | null,
      },
    ): Promise<number> {
      server = createServer(handler)
      guardConnections(
        server,
        {
          maxConnections: limits.maxConnections,
          maxConnectionsPerAddress: limits.maxConnectionsPerAddress,
          writeTimeoutMs: 10_000,
        },
        {
          logger: pino({ level: 'silent' }),
          trustedProxy: trustedProxies(trustProxy),
          openFileLimit: limits.openFileLimit,
        },
      )
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      return (server.address() as AddressInfo).port
    }

    /** Opens `count` idle connections from `localAddress`; resolves with whether each was closed by the server. */
    async function openIdle(port: number, localAddress: string, count: number): Promise<boolean[]> {
      const closed: boolean[] = []
      for (let i = 0; i < count; i++) {
        const socket = connect({ port, host: '127.0.0.1', localAddress })
        sockets.push(socket)
        closed.push(false)
        socket.on('close', () => {
          closed[i] = true
        })
        await new Promise((resolve) => socket.once('connect', resolve))
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
      return closed
    }

    it('R8.7 holds one address to its cap, closing its longest idle connection first', async () => {
      const port = await start([])
      expect(await openIdle(port, '127.0.0.3', 4)).toEqual([true, true, false, false])
    })

    it('R8.7 does not hold a proxy named in TRUST_PROXY to the cap of one address', async () => {
      const port = await start(['127.0.0.3/32'])
      expect(await openIdle(port, '127.0.0.3', 4)).toEqual([false, false, false, false])
    })

    it('R8.7 without MAX_CONNECTIONS, caps connections at the file-descriptor limit it is given less 128', async () => {
      const port = await start([], undefined, {
        maxConnections: null,
        maxConnectionsPerAddress: 100,
        openFileLimit: 148,
      })
      const closed = await openIdle(port, '127.0.0.5', 21)
      expect(closed).toEqual(Array.from({ length: 21 }, (_, i) => i === 0))
    })

    it('R8.8 parses nothing a connection sends after its 33rd unanswered request', async () => {
      // answers wait, so the pipelined requests stay in flight; Node announces each request it parses on this channel
      const port = await start([], (_request, response) => {
        setTimeout(() => response.end('ok'), 300)
      })
      let parsed = 0
      const count = () => {
        parsed++
      }
      subscribe('http.server.request.start', count)
      try {
        // 1,000 requests in one write: Node reads them as one or two chunks
        const answers = await exchange(
          '127.0.0.1',
          port,
          'GET / HTTP/1.1\r\nHost: tessera\r\n\r\n'.repeat(1_000),
        )
        expect(parsed).toBe(33)
        expect(answers.match(/HTTP\/1\.1 200/g)).toHaveLength(32)
        expect(answers.match(/HTTP\/1\.1 503/g)).toHaveLength(1)
      } finally {
        unsubscribe('http.server.request.start', count)
      }
    })

    it('R8.8 a closing connection cut off aborts its requests in flight as Node does, and leaves the process alone', async () => {
      // answers never come: the 32 requests admitted are still in flight when the client resets the connection
      const errors: Array<Error & { code?: string }> = []
      const port = await start([], (request) => {
        request.on('error', (error) => errors.push(error))
      })
      const limit = Error.stackTraceLimit
      const socket = connect({ port, host: '127.0.0.1' })
      sockets.push(socket)
      socket.on('error', () => {})
      await new Promise((resolve) => socket.once('connect', resolve))
      socket.write('GET / HTTP/1.1\r\nHost: tessera\r\n\r\n'.repeat(100))
      await new Promise((resolve) => setTimeout(resolve, 200))
      socket.resetAndDestroy()
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(errors).toHaveLength(32)
      for (const error of errors) expect(error).toMatchObject({ message: 'aborted', code: 'ECONNRESET' })
      // no process-wide setting was lowered to make them: the error has its stack
      expect(Error.stackTraceLimit).toBe(limit)
      expect(errors[0]?.stack).toMatch(/^Error: aborted\n\s+at /)
    })
  })
})
