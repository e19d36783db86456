// The pipelined flood of docs/api.md R8.8 (issue 11): 300 connections, spread over three loopback addresses so that
// none reaches MAX_CONNECTIONS_PER_ADDRESS, each writing 1,500 pipelined GET /openapi.json (the largest answer the
// service gives) at once and reading nothing, while two probes ask GET /health on fresh connections from another
// address, one after the other. The figure is /health's p99 during the flood, against an absolute target; the peak
// RSS is reported beside it. test/hostile/pipelining.test.ts checks what the flood must not break (every request
// answered, memory bounded); how fast the service answers meanwhile depends on the machine, so it is measured here.
import { request } from 'node:http'
import { connect } from 'node:net'
import { requestText } from './http-client.mjs'
import { floodRow } from './rows.mjs'
import { watchPeakRss } from './rss.mjs'

const CONNECTIONS = 300
const FLOOD_ADDRESSES = ['127.0.0.10', '127.0.0.11', '127.0.0.12']
const PROBE_ADDRESS = '127.0.0.2'
const PIPELINED = 1_500
const PROBES = 2
/** Between one probe's answer and its next request. */
const PROBE_PAUSE_MS = 40
/** A probe that has no answer by then counts as an error. */
const PROBE_TIMEOUT_MS = 10_000

/**
 * The flood `settings.pairs` times on a service started with API_DOCS=true, each for settings.floodSeconds.
 * @param {import('./scenarios.mjs').Context} context
 * @param {import('./service-process.mjs').ServerProcess} service
 * @returns {Promise<import('./rows.mjs').Row>}
 */
export async function benchmarkFlood(context, service) {
  const { backend, settings, log } = context
  // not measured: the first answers of a process build the API document and load what /health needs
  for (const path of ['/openapi.json', '/health']) {
    const { status } = await requestText(new URL(path, service.url).href)
    if (status !== 200) throw new Error(`${service.name}: GET ${path} answered ${status} before the flood`)
  }
  // not measured either: one flood first, logged as such. A flood fills the kernel's socket buffers (about a
  // gigabyte here: 300 connections that read nothing), and after a while of calm a virtual machine's kernel takes
  // that memory at several times the cost of the next time (the hypervisor backing again what the guest handed back):
  // the first flood of a process p99 900 to 1,800 ms, its second 30 to 80 ms, and a second process's first flood
  // right after another's 240 to 260 ms (docs/performance.md, "Issue 34, eleventh session"). The machine's state,
  // not the service's: the rounds counted follow a flood
  const warmUp = await flood(service, settings.floodSeconds * 1000)
  log(`${backend} · warm-up flood, not counted: ${describe(warmUp)}`)
  /** @type {FloodRun[]} */
  const runs = []
  for (let round = 0; round < settings.pairs; round++) {
    const run = await flood(service, settings.floodSeconds * 1000)
    log(`${backend} · round ${round + 1} · /health beside a pipelined flood: ${describe(run)}`)
    runs.push(run)
  }
  return floodRow(backend, runs)
}

/**
 * @typedef {object} FloodRun
 * @property {number[]} latencies ms of every probe answered 200, sorted
 * @property {number} p50
 * @property {number} p99
 * @property {number} errors probes not answered 200
 * @property {number | null} peakRssMiB
 */

/**
 * @param {import('./service-process.mjs').ServerProcess} service
 * @param {number} durationMs
 * @returns {Promise<FloodRun>}
 */
async function flood(service, durationMs) {
  const url = new URL(service.url)
  /** @type {import('node:net').Socket[]} */
  const sockets = []
  /** @type {number[]} */
  const latencies = []
  let errors = 0
  let probing = true
  const probe = async () => {
    while (probing) {
      const { status, ms } = await timeHealth(url)
      if (status === 200) latencies.push(ms)
      else errors++
      await new Promise((resolve) => setTimeout(resolve, PROBE_PAUSE_MS))
    }
  }
  const rss = watchPeakRss(service.pid)
  const probes = Array.from({ length: PROBES }, probe)
  let peakRssMiB = null
  try {
    const payload = `GET /openapi.json HTTP/1.1\r\nHost: tessera\r\n\r\n`.repeat(PIPELINED)
    for (let i = 0; i < CONNECTIONS; i++) {
      sockets.push(await openSilent(url, payload, FLOOD_ADDRESSES[i % FLOOD_ADDRESSES.length] ?? '127.0.0.1'))
    }
    await new Promise((resolve) => setTimeout(resolve, durationMs))
  } finally {
    probing = false
    await Promise.all(probes)
    peakRssMiB = rss.stop()
    for (const socket of sockets) socket.destroy()
  }
  latencies.sort((a, b) => a - b)
  return {
    latencies,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors,
    peakRssMiB,
  }
}

/** @param {FloodRun} run */
function describe(run) {
  return (
    `p99 ${Math.round(run.p99)} ms, ${run.latencies.length} answers, ${run.errors} errors, ` +
    `peak RSS ${run.peakRssMiB?.toFixed(0) ?? '?'} MiB`
  )
}

/**
 * @param {number[]} sorted
 * @param {number} fraction
 */
function percentile(sorted, fraction) {
  return sorted[Math.floor(sorted.length * fraction)] ?? Number.NaN
}

/**
 * GET /health on a connection of its own from PROBE_ADDRESS: its status (0: it failed) and how long it took.
 * @param {URL} url
 * @returns {Promise<{ status: number, ms: number }>}
 */
function timeHealth(url) {
  const started = performance.now()
  return new Promise((resolve) => {
    const done = (/** @type {number} */ status) => resolve({ status, ms: performance.now() - started })
    const health = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/health',
        agent: false,
        localAddress: PROBE_ADDRESS,
        timeout: PROBE_TIMEOUT_MS,
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

/**
 * A connection from `localAddress` that writes `payload` at once and reads nothing.
 * @param {URL} url
 * @param {string} payload
 * @param {string} localAddress
 * @returns {Promise<import('node:net').Socket>}
 */
async function openSilent(url, payload, localAddress) {
  const socket = connect({ host: url.hostname, port: Number(url.port), localAddress })
  socket.on('error', () => {})
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  socket.pause()
  socket.write(payload)
  return socket
}
