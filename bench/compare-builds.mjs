// `npm run bench:compare -- <revision>`: this build beside the build of an earlier git revision, on the embedded
// SQLite default (with --postgres on PostgreSQL + Redis, a database and a key prefix for each build): the three cold
// starts against bare Fastify's cold start, GET /auth/me and POST /auth/refresh against bare Fastify, and
// POST /auth/login against raw Argon2 verify. Those ratios depend on the machine as much as on the code (0.33 to 0.52
// for GET /auth/me with the same code, docs/performance.md): whether a change made the service slower is answered by
// the two builds measured in the same rounds, not by the target. Each round measures the limit, then the two builds,
// in an order that alternates from round to round (compare-rounds.mjs). Reports; exits non-zero only when the run
// itself fails.
import { execFileSync } from 'node:child_process'
import { existsSync, symlinkSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { accessTokens, refreshChains } from './accounts.mjs'
import { buildTree } from './build-tree.mjs'
import { compareRounds, summaryLine } from './compare-rounds.mjs'
import { compareStartup } from './compare-startup.mjs'
import { argon2Ceiling } from './limits.mjs'
import { runLoad } from './load.mjs'
import { answeringServers, serverStore } from './postgres.mjs'
import { authMe, HEALTH, LOGIN } from './scenarios.mjs'
import { seedPasswordHash } from './seed.mjs'
import { START_NODE_FLAGS, startBareFastify, startServerProcess } from './service-process.mjs'
import { jwtSecret, readSettings, serviceVariables } from './settings.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '')
const FIGURES = /** @type {const} */ (['startup', 'login', 'me', 'refresh'])
/** @typedef {(typeof FIGURES)[number]} Figure */
const USAGE = `Usage: npm run bench:compare -- <git revision> [--rounds N] [--seconds S] [--figures ${FIGURES.join(',')}]
       [--postgres]

Builds <git revision> in a temporary git worktree (with this checkout's node_modules; its own build script, without
the type check and the client library), seeds a SQLite store for each build with its own bench/stores.mjs (with
--postgres a PostgreSQL database of its own and a Redis key prefix of its own, where the benchmark finds them, both
removed at the end), and measures both builds in alternating order, N rounds (default 10):
  startup  tessera serve's cold start to its first GET /health (development on a fresh and on an existing data
           directory, production on an existing one) ÷ bare Fastify's cold start
  login    POST /auth/login ÷ raw Argon2 verify, S seconds (default 3) per load
  me       GET /auth/me ÷ bare Fastify GET /health, S seconds per load
  refresh  POST /auth/refresh ÷ bare Fastify GET /health, S seconds per load
--figures picks some of them (by default all). The cold starts are the embedded default's with --postgres too.
Prints each round, then each build's median ratio and this build's median ratio ÷ the other's.`

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    figures: { type: 'string', default: FIGURES.join(',') },
    postgres: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
})
const revision = positionals[0]
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const figures = new Set(values.figures.split(',').map((figure) => figure.trim()))
const unknown = [...figures].filter((figure) => !FIGURES.includes(/** @type {Figure} */ (figure)))
if (values.help || revision === undefined || !(rounds >= 2) || !(seconds >= 1) || unknown.length > 0) {
  if (unknown.length > 0) process.stderr.write(`unknown figures: ${unknown.join(', ')}\n\n`)
  process.stdout.write(`${USAGE}\n`)
  process.exit(values.help ? 0 : 2)
}
/** @param {Figure} figure */
const measures = (figure) => figures.has(figure)

const log = (/** @type {string} */ line) => process.stdout.write(`${line}\n`)
const settings = readSettings([], process.env)
const CONNECTIONS = settings.httpConnections
const git = (/** @type {string[]} */ ...args) =>
  execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()

const commit = git('rev-parse', '--verify', `${revision}^{commit}`)
const tmp = await mkdtemp(join(tmpdir(), 'tessera-compare-'))
const otherTree = join(tmp, 'tree')
/** @type {Array<{ stop(): Promise<void> }>} */
const running = []
/** @type {Array<() => Promise<unknown>>} what --postgres made (a database and a key prefix a build), removed last */
const removals = []
let worktreeAdded = false
const cleanUp = async () => {
  await Promise.all(running.splice(0).map((server) => server.stop().catch(() => {})))
  await Promise.all(removals.splice(0).map((remove) => remove().catch(() => {})))
  if (worktreeAdded) git('worktree', 'remove', '--force', otherTree)
  await rm(tmp, { recursive: true, force: true })
}
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    cleanUp().finally(() => process.exit(130))
  })
}

try {
  log(`building ${commit.slice(0, 12)} in ${otherTree}`)
  git('worktree', 'add', '--detach', otherTree, commit)
  worktreeAdded = true
  if (!existsSync(join(otherTree, 'bench', 'stores.mjs'))) {
    throw new Error(
      `${revision} has no bench/stores.mjs: it predates the benchmark this comparison seeds with`,
    )
  }
  symlinkSync(join(ROOT, 'node_modules'), join(otherTree, 'node_modules'))
  buildTree(otherTree, log)
  const trees = [
    { name: 'this build', tree: ROOT },
    { name: commit.slice(0, 12), tree: otherTree },
  ]
  const names = trees.map((build) => build.name)

  /** @type {import('./compare-rounds.mjs').Comparison[]} */
  const comparisons = []
  // first, while no other server is up
  if (measures('startup')) {
    const builds = trees.map(({ name, tree }) => ({ name, tessera: join(tree, 'bin', 'tessera.js') }))
    comparisons.push(...(await compareStartup({ builds, rounds, tmp }, log)))
  }

  if (measures('login') || measures('me') || measures('refresh')) {
    const secret = jwtSecret()
    const passwordHash = await seedPasswordHash(settings.argon2)
    const bare = await startBareFastify()
    running.push(bare)
    /**
     * Each build's running service, its GET /auth/me tokens and fresh refresh chains.
     * @type {Array<{
     *   service: import('./service-process.mjs').ServerProcess,
     *   me: import('./scenarios.mjs').Scenario,
     *   chains: () => Promise<import('./scenarios.mjs').Scenario>,
     * }>}
     */
    const builds = []
    const postgres = values.postgres ? await answeringServers(settings.postgres) : null
    for (const { name, tree } of trees) {
      const dataDir = join(tmp, `data-${builds.length}`)
      const { seedSqliteStore, seedPostgresStore } = /** @type {typeof import('./stores.mjs')} */ (
        await import(join(tree, 'bench', 'stores.mjs'))
      )
      const seeding = { count: settings.baselineUsers, passwordHash, log: () => {} }
      /** @type {Record<string, string>} */
      let env
      if (postgres === null) {
        env = serviceVariables(settings, secret, { DATA_DIR: dataDir })
        log(`${name}: seeding ${settings.baselineUsers} accounts`)
        await seedSqliteStore(dataDir, { ...seeding, serviceEnv: env })
      } else {
        const { database, databaseUrl, variables } = await serverStore(
          postgres,
          `compare_${process.pid}_${builds.length}`,
          removals,
        )
        env = serviceVariables(settings, secret, { DATA_DIR: dataDir, ...variables })
        log(`${name}: seeding ${settings.baselineUsers} accounts in PostgreSQL (${database})`)
        await seedPostgresStore(databaseUrl, { ...seeding, serviceEnv: env })
      }
      const service = await startServerProcess(
        name,
        [...START_NODE_FLAGS, join(tree, 'bin', 'tessera.js'), 'serve'],
        env,
      )
      running.push(service)
      const me = authMe(await accessTokens(service.url, CONNECTIONS, settings.baselineUsers))
      const chains = async () =>
        /** @type {const} */ ({
          kind: 'refresh',
          tokens: await refreshChains(service.url, CONNECTIONS, settings.baselineUsers),
        })
      builds.push({ service, me, chains })
    }
    /** @param {number} index */
    const build = (index) => /** @type {(typeof builds)[number]} */ (builds[index])

    /**
     * Requests per second of one load.
     * @param {string} url
     * @param {import('./scenarios.mjs').Scenario} scenario
     */
    const rate = async (url, scenario, connections = CONNECTIONS, durationSeconds = seconds) =>
      (await runLoad({ url, connections, durationSeconds, scenario })).requestsPerSecond
    const verify = async () =>
      (
        await argon2Ceiling('verify', {
          concurrency: settings.hashConcurrency,
          durationSeconds: seconds,
          argon2: settings.argon2,
        })
      ).value
    await rate(bare.url, HEALTH, CONNECTIONS, settings.warmupSeconds)
    for (const { service, me, chains } of builds) {
      if (measures('me')) await rate(service.url, me, CONNECTIONS, settings.warmupSeconds)
      if (measures('refresh')) await rate(service.url, await chains(), CONNECTIONS, settings.warmupSeconds)
      if (measures('login')) {
        await rate(service.url, LOGIN, settings.argon2Connections, settings.warmupSeconds)
      }
    }

    const common = { names, rounds, lowerIsBetter: false, unit: '/s' }
    const bareLimit = { limit: 'bare Fastify', measureLimit: () => rate(bare.url, HEALTH) }
    /** @type {Array<{ key: Figure, figure: string, limit: string, measureLimit: () => Promise<number>, measure: (build: number) => Promise<number> }>} */
    const loads = [
      {
        key: 'login',
        figure: 'POST /auth/login',
        limit: 'raw Argon2 verify',
        measureLimit: verify,
        measure: (index) => rate(build(index).service.url, LOGIN, settings.argon2Connections),
      },
      {
        key: 'me',
        ...bareLimit,
        figure: 'GET /auth/me',
        measure: (index) => rate(build(index).service.url, build(index).me),
      },
      {
        key: 'refresh',
        ...bareLimit,
        figure: 'POST /auth/refresh',
        measure: async (index) => rate(build(index).service.url, await build(index).chains()),
      },
    ]
    for (const { key, ...load } of loads) {
      if (measures(key)) comparisons.push(await compareRounds({ ...common, ...load }, log))
    }
  }

  log('')
  for (const comparison of comparisons) log(summaryLine(comparison))
} finally {
  await cleanUp()
}
