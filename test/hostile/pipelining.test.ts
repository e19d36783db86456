import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type RunningService, startProcess } from '../support/process.js'
import { eventually, freePort } from '../support/redis-server.js'

// issue 11, "Must not crash or stall": pipelined requests that are never read (docs/api.md §8). The service runs as
// a process of its own, so that its RSS is its own; every connection goes to 127.0.0.x and is closed at the end.
// What these tests check does not depend on the machine's speed: every request answered as R8.8 says, memory
// bounded. How fast /health answers during the flood is a figure of the benchmark (bench/flood-figures.mjs), not of
// a test, which must pass on a busy machine.

/**
 * The flood: 300 connections (spread over FLOOD_ADDRESSES, so that no address reaches its connection cap and
 * every one is admitted). Before the guard, 12 of them buffered 700 MiB; before the guard stopped the parser of a
 * connection over its limit, Node parsed all 450,000 requests and /health waited 2.4 s.
 */
const FLOOD_CONNECTIONS = 300
const FLOOD_ADDRESSES = ['127.0.0.10', '127.0.0.11', '127.0.0.12']
const PIPELINED = 1_500
const FLOOD_MS = 5_000
/** How long a /health probe or a flooded connection may take before the test calls it lost: a loaded machine's. */
const PATIENCE_MS = 30_000
/** How long `tessera serve` may take to start: more than 30 s on a 2-core machine at a load average of 27. */
const START_MS = 90_000
/** A test's own timeout: a start, and the waits above. */
const TEST_MS = 180_000

const pipelined = (path: string, count: number) =>
  `GET ${path} HTTP/1.1\r\nHost: tessera\r\n\r\n`.repeat(count)

/** The resident set of a process, in MiB (Linux). */
function rssMiB(pid: number): number {
  const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kib) / 1024
}

/** GET /health on a connection of its own from 127.0.0.2: its status (0: no answer within PATIENCE_MS). */
function health(url: URL): Promise<number> {
  return new Promise((resolve) => {
    const done = (status: number) => resolve(status)
    const health = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/health',
        agent: false,
        localAddress: '127.0.0.2',
        timeout: PATIENCE_MS,
      },
      (response) => {
        response.resume()
        response.on('end', () => done(response.statusCode ?? 0))
        response.on('error', () => done(0))
      },
    )
    health.on('timeout', () => health.destroy())
    health.on('error', () => done(0))
    health.end()
  })
}

/** A connection (from 127.0.0.1 unless told) that writes `payload` at once and reads nothing until told to. */
async function openSilent(url: URL, payload: string, localAddress?: string): Promise<Socket> {
  const socket = connect({
    host: url.hostname,
    port: Number(url.port),
    ...(localAddress ? { localAddress } : {}),
  })
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.pause()
  socket.write(payload)
  return socket
}

/** Everything a socket receives until it closes, or until `withinMs` (then `closed` is false). */
function readToClose(
  socket: Socket,
  withinMs: number,
): Promise<{ text: string; bytes: number; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let bytes = 0
    const finish = (closed: boolean) => {
      clearTimeout(timer)
      resolve({ text: Buffer.concat(chunks).toString('latin1'), bytes, closed })
    }
    const timer = setTimeout(() => finish(false), withinMs)
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length
      if (chunks.length < 64) chunks.push(chunk)
    })
    socket.once('close', () => finish(true))
    socket.resume()
  })
}

describe('hostile clients: pipelined requests', () => {
  let dir: string
  let service: RunningService
  const sockets: Socket[] = []
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-pipelining-'))
  })
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy()
    await service?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it(
    'R8.8 pipelined requests that are never read do not exhaust memory or stop the service: every /health answered, RSS under 300 MiB',
    async () => {
      service = await startProcess({ DATA_DIR: dir, API_DOCS: 'true' }, START_MS)
      const url = new URL(service.url)
      const pid = service.child.pid as number
      let probing = true
      const statuses: number[] = []
      const probe = async () => {
        while (probing) {
          statuses.push(await health(url))
          await new Promise((resolve) => setTimeout(resolve, 40))
        }
      }
      let maxRss = rssMiB(pid)
      const sampler = setInterval(() => {
        maxRss = Math.max(maxRss, rssMiB(pid))
      }, 100)
      const probes = [probe(), probe()]
      let duringFlood: number
      try {
        // the largest answer the service gives, 1,500 times on each connection, in one write; nothing is ever read
        const payload = pipelined('/openapi.json', PIPELINED)
        for (let i = 0; i < FLOOD_CONNECTIONS; i++)
          sockets.push(await openSilent(url, payload, FLOOD_ADDRESSES[i % FLOOD_ADDRESSES.length]))
        await new Promise((resolve) => setTimeout(resolve, FLOOD_MS))
        // every flooding connection still open and unread: a new client is served
        duringFlood = await health(url)
      } finally {
        probing = false
        await Promise.all(probes)
        clearInterval(sampler)
      }
      expect(duringFlood).toBe(200)
      expect(statuses.length).toBeGreaterThanOrEqual(2)
      expect(statuses.filter((status) => status !== 200)).toEqual([])
      expect(maxRss).toBeLessThan(300)
    },
    TEST_MS,
  )

  it(
    'R8.8 a connection with more than 32 requests in flight gets the 32 answered, a 503 envelope, and is closed',
    async () => {
      service = await startProcess({ DATA_DIR: dir }, START_MS)
      const url = new URL(service.url)
      const socket = await openSilent(url, pipelined('/health', 40))
      sockets.push(socket)
      const { text, closed } = await readToClose(socket, PATIENCE_MS)
      expect(closed).toBe(true)
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]))
      expect(statuses).toEqual([...Array(32).fill(200), 503])
      expect(text).toMatch(/connection: close/i)
      expect(text.endsWith('{"code":503,"message":"Server is busy, retry shortly","data":null}')).toBe(true)
      // and the service serves the next client
      expect(await health(url)).toBe(200)
    },
    TEST_MS,
  )

  it(
    'R8.8 a client that reads nothing of its answers for WRITE_TIMEOUT_MS is cut off',
    async () => {
      const metricsPort = await freePort()
      service = await startProcess(
        { DATA_DIR: dir, WRITE_TIMEOUT_MS: '1000', API_DOCS: 'true', METRICS_PORT: String(metricsPort) },
        START_MS,
      )
      const url = new URL(service.url)
      // 8 × 1.6 MiB of Swagger UI: more than the kernel's buffers on both sides hold
      const bundle = '/docs/static/swagger-ui-bundle.js'
      const size = await new Promise<number>((resolve, reject) =>
        request(new URL(bundle, url), { agent: false }, (response) => {
          response.resume()
          resolve(Number(response.headers['content-length']))
        })
          .on('error', reject)
          .end(),
      )
      const socket = await openSilent(url, pipelined(bundle, 8))
      sockets.push(socket)
      // the service counts the cut (R6.2): read nothing until it has, however long a busy machine makes the second
      const cutOff = async () => {
        const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((reply) => reply.text())
        return /^tessera_connections_closed_total\{reason="write_timeout"\} [1-9]/m.test(metrics)
      }
      await eventually(cutOff, PATIENCE_MS)
      const { bytes, closed } = await readToClose(socket, PATIENCE_MS)
      expect(closed).toBe(true)
      expect(bytes).toBeLessThan(8 * size)
    },
    TEST_MS,
  )
})
