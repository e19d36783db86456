// Servers under test run as separate processes: the built service (`node bin/tessera.js serve`, as `npm start`
// runs it) and the bare Fastify ceiling, each on a free port of 127.0.0.1, over HTTPS when their variables name
// TLS_CERT_FILE. A server is ready when it prints its "listening on http(s)://…" line or, since that line is at level
// info and the benchmark runs the service with LOG_LEVEL=warn, when GET /health answers 200. A cold start is timed
// from just before the process is spawned to its first GET /health 200 (polled every few ms), for the service and
// for bare Fastify alike.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { requestText } from './http-client.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TESSERA = fileURLToPath(new URL('../bin/tessera.js', import.meta.url))
const BARE_FASTIFY = fileURLToPath(new URL('./bare-fastify-server.mjs', import.meta.url))
const BARE_LOGIN = fileURLToPath(new URL('./bare-login-server.mjs', import.meta.url))
const BARE_REFRESH = fileURLToPath(new URL('./bare-refresh-server.mjs', import.meta.url))
const LISTENING = /listening on https?:\/\/[^\s"()]+/
const POLL_MS = 100
/** How often a cold start polls GET /health: a small fraction of even bare Fastify's start-up. */
const COLD_START_POLL_MS = 5
const START_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 40_000
/** Lines of output kept for the error message when a process fails. */
const KEPT_LINES = 40

/**
 * @typedef {object} ServerProcess
 * @property {string} name
 * @property {number} pid
 * @property {string} url base URL, e.g. http://127.0.0.1:40123 (https:// with TLS_CERT_FILE)
 * @property {() => string[]} recentOutput the last lines the process wrote
 * @property {() => boolean} isRunning false once the process has exited
 * @property {() => Promise<void>} stop SIGTERM, then SIGKILL if it does not exit in time
 * @property {number} readyAfterMs from just before the process was spawned to the moment it was found ready
 */

/**
 * Starts the service on the given variables (on top of a minimal environment: PATH and HOME only, so nothing in the
 * caller's environment changes the configuration), with HOST and PORT set to a free port of 127.0.0.1, and its
 * metrics on (METRICS_PORT, another free port, unless `env` names one), as a monitored deployment runs it. Resolves
 * once GET /metrics answers 200 there too.
 * @param {string} name
 * @param {Record<string, string>} env
 * @param {{ nodeArgs?: string[] }} [options]
 * @returns {Promise<ServerProcess>}
 */
export async function startService(name, env, options = {}) {
  const metricsPort = env.METRICS_PORT ?? String(await freePort())
  const service = await startServerProcess(
    name,
    [...(options.nodeArgs ?? START_NODE_FLAGS), TESSERA, 'serve'],
    {
      METRICS_PORT: metricsPort,
      ...env,
    },
  )
  const metrics = await requestText(`http://127.0.0.1:${metricsPort}/metrics`).catch((error) => ({
    status: 0,
    text: String(error),
  }))
  if (metrics.status !== 200) {
    await service.stop()
    throw new Error(
      `${name}: GET /metrics on port ${metricsPort} answered ${metrics.status}: ${metrics.text}`,
    )
  }
  return service
}

/** The Node.js flags `npm start` gives the service (package.json scripts.start), so the benchmark runs it the same. */
export const START_NODE_FLAGS = (() => {
  const manifest = /** @type {{ scripts?: { start?: unknown } }} */ (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  )
  const start = String(manifest.scripts?.start)
  const match = /^node((?:\s+--\S+)*)\s+\S*bin\/tessera\.js\s+serve$/.exec(start)
  if (!match)
    throw new Error(`package.json scripts.start is not "node [flags] ./bin/tessera.js serve": ${start}`)
  return (match[1] ?? '').trim().split(/\s+/).filter(Boolean)
})()

/**
 * Runs `tessera migrate` on the given variables and resolves when it has exited 0.
 * @param {Record<string, string>} env
 * @returns {Promise<void>}
 */
export function migrateWithService(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TESSERA, 'migrate'], {
      cwd: ROOT,
      // the address the service will listen on: production elsewhere needs TLS_CERT_FILE or TRUST_PROXY
      env: baseEnv({ ...env, HOST: '127.0.0.1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
    })
    child.stderr.on('data', (chunk) => {
      output += chunk
    })
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code === 0) resolve()
      else reject(new Error(`tessera migrate exited with ${code}: ${output.trim()}`))
    })
  })
}

/**
 * Starts the bare Fastify server that is the HTTP ceiling, or with `env` TLS_CERT_FILE and TLS_KEY_FILE the HTTPS one
 * (`env`: its variables). `options.nodeArgs`, here and for the floors below: Node.js flags to start it with
 * (bench:threads's --cpu-prof).
 * @param {Record<string, string>} [env]
 * @param {{ nodeArgs?: string[] }} [options]
 * @returns {Promise<ServerProcess>}
 */
export function startBareFastify(env = {}, options = {}) {
  const name = env.TLS_CERT_FILE === undefined ? 'bare fastify' : 'bare fastify (HTTPS)'
  return startBareServer(name, BARE_FASTIFY, env, options)
}

/**
 * One of the bare servers (the ceiling or a floor): `script` in production mode, on `env`, with `options.nodeArgs`.
 * @param {string} name
 * @param {string} script
 * @param {Record<string, string>} env
 * @param {{ nodeArgs?: string[] }} options
 * @returns {Promise<ServerProcess>}
 */
function startBareServer(name, script, env, options) {
  return startServerProcess(name, [...(options.nodeArgs ?? []), script], { NODE_ENV: 'production', ...env })
}

/**
 * Starts the login and register floor (bare-login-server.mjs): bare Fastify verifying logins and hashing
 * registrations' passwords on the service's Argon2 threads, with the service's Argon2 variables (`env`: settings.mjs's
 * argon2Variables).
 * @param {Record<string, string>} env
 * @param {{ nodeArgs?: string[] }} [options]
 * @returns {Promise<ServerProcess>}
 */
export function startBareLogin(env, options = {}) {
  return startBareServer('bare login', BARE_LOGIN, env, options)
}

/**
 * Starts the refresh floor (bare-refresh-server.mjs): bare Fastify rotating refresh tokens durably through the
 * service's own SQLite writer, in a file of its own, or with `env` REDIS_URL and REDIS_KEY_PREFIX in Redis.
 * @param {Record<string, string>} [env]
 * @param {{ nodeArgs?: string[] }} [options]
 * @returns {Promise<ServerProcess>}
 */
export function startBareRefresh(env = {}, options = {}) {
  return startBareServer('bare refresh', BARE_REFRESH, env, options)
}

/**
 * `tessera serve` started cold (as `npm start` runs it) on `env`: the milliseconds from just before the process is
 * spawned to its first GET /health 200. The process is then stopped, and has exited when this resolves.
 * `options.tessera` is the bin/tessera.js to start (by default this checkout's; bench:compare starts another build's).
 * @param {Record<string, string>} env
 * @param {{ tessera?: string }} [options]
 * @returns {Promise<number>}
 */
export function coldStartService(env, options = {}) {
  return coldStart(
    'tessera serve (cold start)',
    [...START_NODE_FLAGS, options.tessera ?? TESSERA, 'serve'],
    env,
  )
}

/**
 * The bare Fastify server started cold, with the Node.js flags the service gets: the milliseconds from just before
 * the process is spawned to its first GET /health 200. The process is then stopped, and has exited when this resolves.
 * @returns {Promise<number>}
 */
export function coldStartBareFastify() {
  return coldStart('bare fastify (cold start)', [...START_NODE_FLAGS, BARE_FASTIFY], {
    NODE_ENV: 'development',
  })
}

/**
 * @param {string} name
 * @param {string[]} args
 * @param {Record<string, string>} env
 * @returns {Promise<number>}
 */
async function coldStart(name, args, env) {
  // ready on GET /health only: the bare server's "listening" line comes before it answers, and the service at
  // LOG_LEVEL=warn prints none, so both are timed the same way
  const server = await startServerProcess(name, args, env, { pollMs: COLD_START_POLL_MS, healthOnly: true })
  await server.stop()
  return server.readyAfterMs
}

/**
 * A port of 127.0.0.1 that nothing listens on now.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** @param {Record<string, string>} env */
function baseEnv(env) {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env }
}

/**
 * Starts `node <args>` as a server on a free port of 127.0.0.1 (HOST and PORT are added to `env`). It is ready when
 * it prints its "listening" line (unless `healthOnly`) or GET /health, polled every `pollMs`, answers 200.
 * @param {string} name
 * @param {string[]} args
 * @param {Record<string, string>} env
 * @param {{ pollMs?: number, healthOnly?: boolean }} [options]
 * @returns {Promise<ServerProcess>}
 */
export async function startServerProcess(name, args, env, options = {}) {
  const pollMs = options.pollMs ?? POLL_MS
  const port = await freePort()
  const url = `${env.TLS_CERT_FILE === undefined ? 'http' : 'https'}://127.0.0.1:${port}`
  const spawnedAt = performance.now()
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: baseEnv({ ...env, HOST: '127.0.0.1', PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  /** @type {string[]} */
  const lines = []
  const keep = (/** @type {string} */ line) => {
    lines.push(line)
    if (lines.length > KEPT_LINES) lines.shift()
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))

  return new Promise((resolve, reject) => {
    let settled = false
    const fail = (/** @type {string} */ reason) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`${name} ${reason}\n${lines.join('\n')}`))
    }
    const ready = () => {
      if (settled) return
      const readyAfterMs = performance.now() - spawnedAt
      settled = true
      clearTimeout(timer)
      resolve({
        name,
        readyAfterMs,
        pid: /** @type {number} */ (child.pid),
        url,
        recentOutput: () => [...lines],
        isRunning: () => child.exitCode === null && child.signalCode === null,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return
          child.kill('SIGTERM')
          const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
          await exited
          clearTimeout(killer)
        },
      })
    }
    const timer = setTimeout(() => fail(`did not start within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS)
    child.once('error', (error) => fail(`could not be started: ${error.message}`))
    child.once('exit', (code, signal) => fail(`exited before it was ready (code ${code}, signal ${signal})`))
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (/** @type {string} */ chunk) => {
      for (const line of chunk.split('\n')) if (line.trim() !== '') keep(line)
    })
    let buffered = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (/** @type {string} */ chunk) => {
      buffered += chunk
      const parts = buffered.split('\n')
      buffered = parts.pop() ?? ''
      for (const line of parts) {
        if (line.trim() === '') continue
        keep(line)
        if (!options.healthOnly && LISTENING.test(line)) ready()
      }
    })
    const poll = async () => {
      while (!settled) {
        await new Promise((done) => setTimeout(done, pollMs))
        try {
          const response = await requestText(`${url}/health`, { timeoutMs: 2_000 })
          if (response.status === 200) ready()
        } catch {
          // not listening yet
        }
      }
    }
    void poll()
  })
}
