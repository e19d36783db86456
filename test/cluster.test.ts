import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { getOnNewConnection, requestPids } from './support/cluster.js'
import { fetchJson } from './support/fetch-json.js'
import { type RunningService, startProcess } from './support/process.js'

const PASSWORD = 'correct horse battery'
/** How long a worker may take to die and be replaced: two of these fit in the test's 90 s. */
const WORKER_START_BOUND_MS = 40_000

describe('WORKERS: several worker processes on one port (node:cluster)', () => {
  let dir: string
  let service: RunningService | undefined
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-cluster-'))
  })
  afterEach(async () => {
    await service?.stop()
    service = undefined
    await rm(dir, { recursive: true, force: true })
  })

  it('WORKERS=2 logs one start-up line, spreads requests over both workers and exits 0 on SIGTERM', async () => {
    service = await startProcess({ DATA_DIR: dir, WORKERS: '2', AUTH_JWT_SECRET: undefined })
    expect(service.stdout).toHaveLength(1)
    expect(JSON.parse(service.stdout[0] ?? '{}')).toMatchObject({ workers: 2 })
    expect(service.stdout[0]).toMatch(/\(store: sqlite .*app\.db, 2 workers\)/)
    for (let i = 0; i < 20; i++) expect(await getOnNewConnection(`${service.url}/health`)).toBe(200)
    expect(requestPids(service).size).toBe(2)
    expect(requestPids(service).has(service.child.pid)).toBe(false)
    expect(await service.stop()).toBe(0)
  })

  it('workers share the SQLite file: of 40 concurrent refreshes with one token exactly one succeeds', async () => {
    service = await startProcess({ DATA_DIR: dir, WORKERS: '2' })
    await fetchJson(`${service.url}/auth/register`, {
      body: { email: 'ada@example.com', password: PASSWORD },
    })
    const login = await fetchJson(`${service.url}/auth/login`, {
      body: { email: 'ada@example.com', password: PASSWORD },
    })
    const token = login.body.data.refresh_token
    const replies = await Promise.all(
      Array.from({ length: 40 }, () =>
        fetchJson(`${service!.url}/auth/refresh`, { body: { refresh_token: token } }),
      ),
    )
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1)
    expect(replies.filter((reply) => reply.status === 401)).toHaveLength(39)
    expect(requestPids(service).size).toBe(2)
  })

  it('a worker that dies is logged and replaced, and the service keeps answering', async () => {
    service = await startProcess({ DATA_DIR: dir, WORKERS: '2' })
    for (let i = 0; i < 10; i++) await getOnNewConnection(`${service.url}/health`)
    const [victim] = [...requestPids(service)]
    process.kill(victim, 'SIGKILL')
    // bounds, not timings: a replacement worker loads the whole service, which took over 10 s at load average 15
    const deadline = Date.now() + WORKER_START_BOUND_MS
    while (!service.stdout.some((line) => line.includes('a worker died')) && Date.now() < deadline)
      await sleep(50)
    const died = service.stdout
      .map((line) => JSON.parse(line))
      .find((record) => record.msg?.includes('a worker died'))
    expect(died).toMatchObject({ workerPid: victim, signal: 'SIGKILL', level: 50 })
    // the replacement serves too
    const before = requestPids(service).size
    const replaced = Date.now() + WORKER_START_BOUND_MS
    while (requestPids(service).size === before && Date.now() < replaced) {
      expect(await getOnNewConnection(`${service.url}/health`)).toBe(200)
      await sleep(20)
    }
    expect(requestPids(service).size).toBe(before + 1)
  })

  it('a start that fails in the workers stops the primary with a non-zero exit', async () => {
    const blocker = await startProcess({ DATA_DIR: dir })
    try {
      const port = new URL(blocker.url).port
      const { runCli } = await import('./support/process.js')
      const result = await runCli(['serve'], { DATA_DIR: dir, WORKERS: '2', PORT: port, HOST: '127.0.0.1' })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('EADDRINUSE')
    } finally {
      await blocker.stop()
    }
  })
})
