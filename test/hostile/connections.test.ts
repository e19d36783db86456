import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readOpenFileLimit } from '../../src/http/file-descriptor-limit.js'
import { type RunningService, startProcess } from '../support/process.js'

// issue 11, "Connection floods" (docs/api.md §8): one address holds idle keep-alive connections by the thousand. The
// service runs as a process of its own with a lowered file-descriptor limit, so that the flood reaches it while this
// process (ulimit -n 20,000 here) holds every connection of the flood. Every connection goes to 127.0.0.x.

/** This process's own file-descriptor limit bounds the flood it can hold (20,000 here; 1,024 on many machines). */
const OWN_OPEN_FILES = readOpenFileLimit() ?? 1_024
/** The service's file-descriptor limit (MAX_CONNECTIONS defaults to it less 128), and a flood half as large again. */
const SERVICE_OPEN_FILES = Math.min(2_048, Math.floor(OWN_OPEN_FILES / 2))
const FLOOD = Math.min(3_000, OWN_OPEN_FILES - 256)

interface Held {
  socket: Socket
  closed: boolean
}

/** A keep-alive connection from 127.0.0.1 that asks GET /health once, reads the answer and stays open, idle. */
async function holdIdle(url: URL): Promise<Held> {
  const socket = connect({ host: url.hostname, port: Number(url.port) })
  const held = { socket, closed: false }
  socket.on('error', () => {})
  socket.once('close', () => {
    held.closed = true
  })
  await new Promise<void>((resolve) => {
    socket.once('connect', () => socket.write('GET /health HTTP/1.1\r\nHost: tessera\r\n\r\n'))
    socket.once('data', () => resolve())
    socket.once('close', () => resolve())
  })
  return held
}

/** GET /health on a fresh connection from `localAddress`; its status (0: the connection failed). */
function health(url: URL, localAddress: string): Promise<number> {
  return new Promise((resolve) => {
    const probe = request(
      { host: url.hostname, port: url.port, path: '/health', agent: false, localAddress, timeout: 10_000 },
      (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode ?? 0))
      },
    )
    probe.on('timeout', () => probe.destroy())
    probe.on('error', () => resolve(0))
    probe.end()
  })
}

describe('hostile clients: connection floods', () => {
  let dir: string
  let service: RunningService
  const held: Held[] = []
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-connections-'))
  })
  afterEach(async () => {
    for (const { socket } of held.splice(0)) socket.destroy()
    await service?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('R8.7 a fresh client is served while one address holds thousands of idle keep-alive connections', async () => {
    // the per-address cap out of the way: the total cap, from the file-descriptor limit, is what holds here
    service = await startProcess(
      { DATA_DIR: dir, MAX_CONNECTIONS_PER_ADDRESS: '100000' },
      20_000,
      SERVICE_OPEN_FILES,
    )
    const url = new URL(service.url)
    for (let i = 0; i < FLOOD; i += 100) {
      held.push(...(await Promise.all(Array.from({ length: Math.min(100, FLOOD - i) }, () => holdIdle(url)))))
    }
    const statuses: number[] = []
    for (let i = 0; i < 20; i++) statuses.push(await health(url, '127.0.0.2'))
    expect(statuses).toEqual(Array(20).fill(200))
    // what the flood holds: as many as the cap leaves, the newest (the longest idle made room for them)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const open = held.filter((connection) => !connection.closed).length
    expect(open).toBeGreaterThan(SERVICE_OPEN_FILES / 2)
    expect(open).toBeLessThanOrEqual(SERVICE_OPEN_FILES - 128)
    expect(held.slice(-100).every((connection) => !connection.closed)).toBe(true)
  })

  it('R8.7 one address holds at most MAX_CONNECTIONS_PER_ADDRESS connections: its longest idle are closed first', async () => {
    service = await startProcess({ DATA_DIR: dir, MAX_CONNECTIONS_PER_ADDRESS: '50' })
    const url = new URL(service.url)
    for (let i = 0; i < 100; i++) held.push(await holdIdle(url))
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(held.map((connection) => connection.closed)).toEqual([
      ...Array(50).fill(true),
      ...Array(50).fill(false),
    ])
    // another address is not counted with it
    expect(await health(url, '127.0.0.2')).toBe(200)
    expect(held.at(-1)?.closed).toBe(false)
  })
})
