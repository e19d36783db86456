import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/** Debian's redis-server: the suites that need Redis to fail start one of their own, never touching the system's. */
export const REDIS_SERVER = '/usr/bin/redis-server'

/** Whether a suite can start its own Redis; when not, says once which suite is skipped. */
export function redisServerAvailable(suite: string): boolean {
  const available = existsSync(REDIS_SERVER)
  if (!available) console.warn(`skipping ${suite}: no ${REDIS_SERVER}`)
  return available
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Polls until the check holds, or fails after the deadline. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`)
    await sleep(100)
  }
}

/** Starts a redis-server on 127.0.0.1:`port` keeping its files in `dir`; resolves once it accepts connections. */
export async function startRedisServer(
  port: number,
  dir: string,
  args: readonly string[] = [],
): Promise<ChildProcess> {
  const redis = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...args],
    { stdio: 'ignore' },
  )
  await eventually(
    () =>
      new Promise<boolean>((resolve) => {
        const probe = connect(port, '127.0.0.1')
        probe.once('connect', () => {
          probe.destroy()
          resolve(true)
        })
        probe.once('error', () => resolve(false))
      }),
    10_000,
  )
  return redis
}
