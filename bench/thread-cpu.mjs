// `npm run bench:threads -- <figure>`: where one load's CPU goes, thread by thread. Starts the built service as the
// benchmark does (its flags, variables and a seeded store of settings.baselineUsers accounts, on the embedded default
// or on PostgreSQL + Redis), loads one endpoint as the benchmark does after a warm-up, and reads each of the
// service's threads from /proc/<pid>/task before and after: CPU (user and system) per request, share of a core, and
// context switches per request; beside them, the machine's CPU split from /proc/stat. This is how the per-thread
// figures of docs/performance.md were measured. Linux only; reports, and exits non-zero only when the run fails.
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { accessTokens, refreshChains } from './accounts.mjs'
import { BENCH_PASSWORD } from './argon2-options.mjs'
import { runLoad } from './load.mjs'
import { answeringServers, serverKeyPrefix, serverStore } from './postgres.mjs'
import { authMe, HEALTH, LOGIN } from './scenarios.mjs'
import { seedPasswordHash } from './seed.mjs'
import {
  START_NODE_FLAGS,
  startBareFastify,
  startBareLogin,
  startBareRefresh,
  startService,
} from './service-process.mjs'
import { argon2Variables, jwtSecret, readSettings, serviceVariables } from './settings.mjs'
import { seedPostgresStore, seedSqliteStore } from './stores.mjs'

const FIGURES = /** @type {const} */ (['health', 'me', 'refresh', 'login', 'register'])
/** @typedef {(typeof FIGURES)[number]} Figure */
const USAGE = `Usage: npm run bench:threads -- <${FIGURES.join('|')}> [--postgres] [--seconds S] [--cpu-prof DIR]
       [--env NAME=VALUE ...] [--floor]

Starts the built service on a seeded store (the embedded SQLite default, or with --postgres a fresh database and Redis
key prefix where the benchmark finds them), loads the endpoint for S seconds (default 8) after a 2 s warm-up, with
the benchmark's connections, and prints for each of the service's threads its CPU per request (user + system),
its share of a core and its context switches per request, and the machine's CPU split. The main thread is "main";
the others are named by their thread id, busiest first (Argon2 threads under login and register, the SQLite writer
under refresh). --cpu-prof DIR also writes V8 CPU profiles of every thread there (the run then costs more). Each
--env sets one of the service's variables over the benchmark's (AUDIT_RETENTION_DAYS=0, say), so that a setting's
cost can be read thread by thread; the store is seeded with the benchmark's variables alone. --floor loads the
figure's floor instead of the service, the very server the benchmark's floor row starts, so that the two can be read
side by side: bare Fastify's GET /health for health, the refresh floor for refresh (its Redis rotation with
--postgres), the login and register floor for login and register; me has none. A floor has no store to seed, and
--env sets its variables.`
/** /proc/<pid>/task/<tid>/stat counts CPU time in clock ticks of 10 ms (USER_HZ 100 on Linux). */
const TICK_US = 10_000

/**
 * @typedef {object} ThreadSample
 * @property {number} userTicks
 * @property {number} systemTicks
 * @property {number} voluntary voluntary context switches (the thread waited)
 * @property {number} involuntary involuntary context switches (the thread was preempted)
 */

/**
 * Each thread of `pid` now, by thread id; a thread that ends while it is read is left out.
 * @param {number} pid
 * @returns {Map<number, ThreadSample>}
 */
function threadSamples(pid) {
  /** @type {Map<number, ThreadSample>} */
  const samples = new Map()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      // the fields after the command name, which is in parentheses and may hold spaces
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
      samples.set(Number(tid), {
        userTicks: Number(fields[11]),
        systemTicks: Number(fields[12]),
        voluntary: Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0),
        involuntary: Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0),
      })
    } catch {
      // ended meanwhile
    }
  }
  return samples
}

/** The machine's CPU time so far (/proc/stat's first line), in ticks: user, nice, system, idle, iowait, irq, softirq. */
function machineTicks() {
  return (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1, 8).map(Number)
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    postgres: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '8' },
    'cpu-prof': { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
    floor: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
})
const figure = /** @type {Figure | undefined} */ (positionals[0])
const seconds = Number(values.seconds)
const overrides = values.env.map((assignment) => /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(assignment))
if (
  values.help ||
  figure === undefined ||
  !FIGURES.includes(figure) ||
  !(seconds > 0) ||
  overrides.some((match) => match === null) ||
  (values.floor && figure === 'me')
) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(values.help ? 0 : 1)
}

const settings = readSettings([], process.env)
const users = settings.baselineUsers
const tmp = await mkdtemp(join(tmpdir(), 'tessera-threads-'))
/** @type {Array<() => Promise<unknown>>} run at the end, last first */
const cleanups = [() => rm(tmp, { recursive: true, force: true })]
try {
  const log = (/** @type {string} */ line) => process.stdout.write(`${line}\n`)
  const profileDir = values['cpu-prof']
  /** Node.js flags for V8 profiles of every thread (--cpu-prof), the service's or a floor's. */
  const profileArgs = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]
  /** @type {Record<string, string>} */
  const overridden = {}
  for (const match of overrides) if (match !== null) overridden[match[1] ?? ''] = match[2] ?? ''
  const service = values.floor
    ? await startFloor(figure, profileArgs, overridden)
    : await startSeededService(figure, profileArgs, overridden, log)
  cleanups.push(() => service.stop())

  const argon2Bound = figure === 'login' || figure === 'register'
  const connections = argon2Bound ? settings.argon2Connections : settings.httpConnections
  let registrations = 0
  /** @returns {Promise<import('./scenarios.mjs').Scenario>} a fresh scenario: refresh chains are used up by a load */
  const scenario = async () => {
    switch (figure) {
      case 'health':
        return HEALTH
      case 'me':
        return authMe(await accessTokens(service.url, connections, users))
      case 'refresh':
        return { kind: 'refresh', tokens: await refreshChains(service.url, connections, users) }
      case 'login':
        return LOGIN
      case 'register':
        return { kind: 'register', emailPrefix: `threads-${registrations++}`, password: BENCH_PASSWORD }
      default:
        throw new Error(`no scenario for ${figure}`)
    }
  }
  await runLoad({ url: service.url, connections, durationSeconds: 2, scenario: await scenario() })
  const measured = await scenario()
  const before = threadSamples(service.pid)
  const machineBefore = machineTicks()
  const result = await runLoad({
    url: service.url,
    connections,
    durationSeconds: seconds,
    scenario: measured,
  })
  const after = threadSamples(service.pid)
  const machine = machineTicks().map((ticks, i) => ticks - (machineBefore[i] ?? 0))

  const requests = result.ok
  const cores = (/** @type {number} */ ticks) => (ticks * TICK_US) / 1e6 / result.durationSeconds
  log(
    `${figure}: ${Math.round(result.requestsPerSecond).toLocaleString('en-US')} requests a second over ` +
      `${result.durationSeconds} s, ${connections} connections, ${result.non2xx + result.errors} errors`,
  )
  const threads = [...after]
    .map(([tid, end]) => {
      const start = before.get(tid) ?? { userTicks: 0, systemTicks: 0, voluntary: 0, involuntary: 0 }
      const user = end.userTicks - start.userTicks
      const system = end.systemTicks - start.systemTicks
      return {
        name: tid === service.pid ? 'main' : `thread ${tid}`,
        user,
        system,
        voluntary: end.voluntary - start.voluntary,
        involuntary: end.involuntary - start.involuntary,
      }
    })
    .filter((thread) => thread.user + thread.system > 0)
    .sort((a, b) => b.user + b.system - (a.user + a.system))
  const perRequest = (/** @type {number} */ value) => (value / requests).toFixed(1).padStart(9)
  log('thread           µs/request  (user + system)   cores  switches/request (waited, preempted)')
  for (const thread of threads) {
    const micros = (/** @type {number} */ ticks) => (ticks * TICK_US) / requests
    log(
      `${thread.name.padEnd(16)} ${micros(thread.user + thread.system)
        .toFixed(1)
        .padStart(10)}  ` +
        `(${micros(thread.user).toFixed(1)} + ${micros(thread.system).toFixed(1)})`.padEnd(18) +
        `${cores(thread.user + thread.system)
          .toFixed(2)
          .padStart(7)}  ` +
        `${perRequest(thread.voluntary)} ${perRequest(thread.involuntary)}`,
    )
  }
  const total = machine.reduce((sum, ticks) => sum + ticks, 0)
  const cpus = availableParallelism()
  const share = (/** @type {number} */ i) => (((machine[i] ?? 0) / total) * cpus).toFixed(2)
  log(
    `machine (${cpus} cores): user ${share(0)}, system ${share(2)}, idle ${share(3)}, ` +
      `iowait ${share(4)}, softirq ${share(6)} cores`,
  )
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup()
}

/**
 * The figure's floor, as service-figures.mjs starts it, with `env` over its variables and `profileArgs` among its
 * Node.js flags.
 * @param {Figure} figure
 * @param {string[]} profileArgs
 * @param {Record<string, string>} env
 * @returns {Promise<import('./service-process.mjs').ServerProcess>}
 */
async function startFloor(figure, profileArgs, env) {
  const options = { nodeArgs: profileArgs }
  switch (figure) {
    case 'health':
      return startBareFastify(env, options)
    case 'refresh': {
      if (!values.postgres) return startBareRefresh(env, options)
      const { redisUrl } = await answeringServers(settings.postgres)
      const keyPrefix = serverKeyPrefix(redisUrl, `threads_floor_${process.pid}`, cleanups)
      return startBareRefresh({ REDIS_URL: redisUrl, REDIS_KEY_PREFIX: keyPrefix, ...env }, options)
    }
    case 'login':
    case 'register':
      return startBareLogin({ ...argon2Variables(settings), ...env }, options)
    default:
      throw new Error(`${figure} has no floor`)
  }
}

/**
 * The built service on a seeded store (the embedded default, or with --postgres a fresh database and key prefix),
 * started as the benchmark starts it (with `profileArgs` beside its flags), with `overridden` over its variables.
 * @param {Figure} figure
 * @param {string[]} profileArgs
 * @param {Record<string, string>} overridden
 * @param {(line: string) => void} log
 * @returns {Promise<import('./service-process.mjs').ServerProcess>}
 */
async function startSeededService(figure, profileArgs, overridden, log) {
  const secret = jwtSecret()
  const passwordHash = await seedPasswordHash(settings.argon2)
  /** @type {Record<string, string>} */
  let env
  if (values.postgres) {
    const servers = await answeringServers(settings.postgres)
    const { databaseUrl, variables } = await serverStore(servers, `threads_${process.pid}`, cleanups)
    env = serviceVariables(settings, secret, { DATA_DIR: join(tmp, 'data'), ...variables })
    await seedPostgresStore(databaseUrl, { count: users, passwordHash, serviceEnv: env, log })
  } else {
    env = serviceVariables(settings, secret, { DATA_DIR: join(tmp, 'data') })
    await seedSqliteStore(join(tmp, 'data'), { count: users, passwordHash, serviceEnv: env, log })
  }
  const nodeArgs = [...START_NODE_FLAGS, ...profileArgs]
  return startService(`tessera (${figure})`, { ...env, ...overridden }, { nodeArgs })
}
