// `npm run bench:compare -- <revision>`: this build beside the build of an earlier git revision, on the figures whose
// targets are ratios to bare Fastify (GET /auth/me, POST /auth/refresh), on the embedded SQLite default. Those ratios
// depend on the machine as much as on the code (0.33 to 0.52 for GET /auth/me with the same code, docs/performance.md):
// whether a change made the service slower is answered by the two builds measured in the same rounds, not by the
// target. Each round loads bare Fastify, then the two builds, in an order that alternates from round to round: on
// these machines the service loaded second came out about 7 % ahead, whichever build it was. Reports; exits non-zero
// only when the run itself fails.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, symlinkSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { accessTokens, refreshChains } from './accounts.mjs'
import { runLoad } from './load.mjs'
import { median } from './pairs.mjs'
import { authMe, HEALTH } from './scenarios.mjs'
import { seedPasswordHash } from './seed.mjs'
import { START_NODE_FLAGS, startBareFastify, startServerProcess } from './service-process.mjs'
import { readSettings, serviceVariables } from './settings.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '')
const USAGE = `Usage: npm run bench:compare -- <git revision> [--rounds N] [--seconds S]

Builds <git revision> in a temporary git worktree (with this checkout's node_modules), seeds a SQLite store for each
build with its own bench/stores.mjs, and measures GET /auth/me and POST /auth/refresh of both builds against bare
Fastify in alternating order, N rounds (default 10) of S seconds (default 3) per load. Prints each round and the
median ratio of each build, and this build's median ÷ the other's.`

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    help: { type: 'boolean', default: false },
  },
})
const revision = positionals[0]
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
if (values.help || revision === undefined || !(rounds >= 2) || !(seconds >= 1)) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(values.help ? 0 : 2)
}

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
let worktreeAdded = false
const cleanUp = async () => {
  await Promise.all(running.splice(0).map((server) => server.stop().catch(() => {})))
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
  // the service alone (the client library and the demo page are not loaded here), compiled without the type check:
  // that commit was checked against its own dependencies, and this checkout's may be newer
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--noCheck'], {
    cwd: otherTree,
    stdio: 'inherit',
  })

  const secret = randomBytes(36).toString('base64url')
  const passwordHash = await seedPasswordHash(settings.argon2)
  /** @param {string} dataDir */
  const serviceEnv = (dataDir) => serviceVariables(settings, secret, { DATA_DIR: dataDir })

  const bare = await startBareFastify()
  running.push(bare)
  const builds = []
  for (const { name, tree } of [
    { name: 'this build', tree: ROOT },
    { name: commit.slice(0, 12), tree: otherTree },
  ]) {
    const dataDir = join(tmp, `data-${builds.length}`)
    const env = serviceEnv(dataDir)
    log(`${name}: seeding ${settings.baselineUsers} accounts`)
    const { seedSqliteStore } = /** @type {typeof import('./stores.mjs')} */ (
      await import(join(tree, 'bench', 'stores.mjs'))
    )
    await seedSqliteStore(dataDir, {
      count: settings.baselineUsers,
      passwordHash,
      serviceEnv: env,
      log: () => {},
    })
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
    builds.push({ name, service, me, chains })
  }

  /**
   * @param {string} url
   * @param {import('./scenarios.mjs').Scenario} scenario
   */
  const rate = async (url, scenario, durationSeconds = seconds) =>
    (await runLoad({ url, connections: CONNECTIONS, durationSeconds, scenario })).requestsPerSecond
  await rate(bare.url, HEALTH, settings.warmupSeconds)
  for (const build of builds) {
    await rate(build.service.url, build.me, settings.warmupSeconds)
    await rate(build.service.url, await build.chains(), settings.warmupSeconds)
  }

  const summary = []
  for (const figure of /** @type {const} */ (['GET /auth/me', 'POST /auth/refresh'])) {
    /** @type {number[][]} */
    const ratios = builds.map(() => [])
    for (let round = 0; round < rounds; round++) {
      const limit = await rate(bare.url, HEALTH)
      const order = round % 2 === 0 ? [0, 1] : [1, 0]
      const line = [`${figure} round ${round + 1}: bare Fastify ${Math.round(limit)}/s`]
      for (const index of order) {
        const build = /** @type {(typeof builds)[number]} */ (builds[index])
        const scenario = figure === 'GET /auth/me' ? build.me : await build.chains()
        const value = await rate(build.service.url, scenario)
        ratios[index]?.push(value / limit)
        line.push(`${build.name} ${Math.round(value)}/s (${(value / limit).toFixed(3)})`)
      }
      log(line.join(', '))
    }
    const [ours, theirs] = ratios.map(median)
    summary.push(
      `${figure} ÷ bare Fastify, median of ${rounds} rounds: this build ${ours?.toFixed(3)}, ` +
        `${builds[1]?.name} ${theirs?.toFixed(3)}; this build ÷ the other ${((ours ?? 0) / (theirs ?? 1)).toFixed(3)}`,
    )
  }
  log('')
  for (const line of summary) log(line)
} finally {
  await cleanUp()
}
