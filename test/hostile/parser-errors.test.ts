import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { startTestService, type TestService } from '../support/test-service.js'

// issue 11, "Errors of Node's HTTP parser" (docs/api.md R1.2): what Node refuses before any route is answered with
// the envelope too. Raw requests to 127.0.0.1, each on a connection of its own.

interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: unknown
}

describe("hostile clients: requests Node's HTTP parser refuses", () => {
  let service: TestService
  let port: number
  beforeAll(async () => {
    service = await startTestService(backends[0]!, {
      env: { REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000' },
    })
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    port = (service.app.server.address() as AddressInfo).port
  })
  afterAll(() => service.close())

  /** Writes `raw` (then half-closes when `end`), and parses the one answer that comes back before the close. */
  function send(raw: string, options: { end?: boolean } = {}): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1')
      const chunks: Buffer[] = []
      const timer = setTimeout(() => socket.destroy(new Error('no answer within 10 s')), 10_000)
      socket.on('data', (chunk: Buffer) => chunks.push(chunk))
      socket.on('error', reject)
      socket.on('close', () => {
        clearTimeout(timer)
        const text = Buffer.concat(chunks).toString('utf8')
        const [head = '', body = ''] = text.split('\r\n\r\n')
        const [statusLine = '', ...lines] = head.split('\r\n')
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        )
        try {
          resolve({ status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) })
        } catch {
          reject(new Error(`not a JSON answer: ${text}`))
        }
      })
      socket.on('connect', () => {
        socket.write(raw)
        if (options.end) socket.end()
      })
    })
  }

  const expectEnvelope = (answer: RawAnswer, status: number, message: string) => {
    expect(answer.status).toBe(status)
    expect(answer.headers['content-type']).toMatch(/^application\/json/)
    expect(answer.body).toEqual({ code: status, message, data: null })
  }

  it('R1.13 two Content-Length headers are a 400 envelope', async () => {
    const answer = await send(
      'POST /auth/login HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    )
    expectEnvelope(answer, 400, 'Bad Request')
    expect(answer.headers.connection).toBe('close')
  })

  it('R1.13 headers over Node’s limit are a 431 envelope', async () => {
    const answer = await send(`GET /health HTTP/1.1\r\nHost: t\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`)
    expectEnvelope(answer, 431, 'Request Header Fields Too Large')
  })

  it('R1.13 a request that does not arrive within the timeout is a 408 envelope', async () => {
    expectEnvelope(await send('GET /health HTTP/1.1\r\nHost: t\r\n'), 408, 'Request Timeout')
  })

  it('R1.13 a malformed request line is a 400 envelope', async () => {
    expectEnvelope(await send('GET /health HTTP/9.x\r\n\r\n'), 400, 'Bad Request')
    expectEnvelope(await send('NOT A REQUEST\r\n\r\n'), 400, 'Bad Request')
  })

  it('R1.13 a body shorter than its Content-Length is a 400 envelope', async () => {
    const answer = await send(
      'POST /auth/login HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":',
      { end: true },
    )
    expectEnvelope(answer, 400, 'Bad Request')
  })

  it('R1.13 a path with broken percent-encoding is a 400 envelope', async () => {
    expectEnvelope(
      await send('GET /auth/%zz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'),
      400,
      'Bad Request',
    )
  })

  it('R1.13 an HTTP/1.1 request without Host is a 400 envelope, and an Expect the service cannot meet a 417', async () => {
    expectEnvelope(await send('GET /health HTTP/1.1\r\n\r\n'), 400, 'Bad Request')
    expectEnvelope(
      await send('GET /health HTTP/1.1\r\nHost: t\r\nExpect: something-else\r\n\r\n'),
      417,
      'Expectation Failed',
    )
  })
})
