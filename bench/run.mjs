// `npm run bench` (after `npm run build`): the service's figures next to the machine's own limits, on the embedded
// default and on PostgreSQL + Redis when they answer (settings.mjs says where; `--skip-postgres` to leave them out).
// `--quick` for a short run; `--write-docs` to have a full run rewrite docs/performance.md (without it, the page goes
// to bench/results/latest.md, which is not committed); `--startup-only` for the cold-start phase alone. `--help` for
// the usage. Exits non-zero only when the run itself fails; missed targets are listed.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { accessTokens } from './accounts.mjs'
import { makeCertificate } from './certificate.mjs'
import { benchmarkFlood } from './flood-figures.mjs'
import { benchmarkHttps } from './https-figures.mjs'
import { describeMachine } from './machine.mjs'
import { serverStore, shown, unavailable } from './postgres.mjs'
import { describeConfiguration, writePerformancePage, writeResults } from './report.mjs'
import { errorsRow } from './rows.mjs'
import { compareScale } from './scale-figures.mjs'
import { seedPasswordHash } from './seed.mjs'
import { benchmarkService } from './service-figures.mjs'
import { startBareFastify, startService } from './service-process.mjs'
import {
  compareSettings,
  eddsaAccessTokens,
  NO_AUDIT_TRAIL,
  PER_DEVICE_SESSIONS,
} from './setting-figures.mjs'
import { jwtSecret, readSettings, serviceVariables, USAGE } from './settings.mjs'
import { benchmarkStartup } from './startup-figures.mjs'
import { seedPostgresStore, seedSqliteStore } from './stores.mjs'
import { describeMiss, missedTargets, textTable } from './table.mjs'

const EMBEDDED = 'embedded (SQLite)'
const POSTGRES = 'PostgreSQL + Redis'
/** GET /auth/me and POST /auth/refresh ÷ bare Fastify on each backend (issue 34). */
const TARGETS = {
  embedded: { meTarget: 0.5, refreshTarget: 0.3 },
  postgres: { meTarget: 0.25, refreshTarget: 0.25 },
}

const settings = (() => {
  try {
    return readSettings(process.argv.slice(2), process.env)
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`)
    process.exit(2)
  }
})()
if (settings.help) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(0)
}
const startedAt = new Date()
const runId = startedAt.getTime().toString(36)
const log = (/** @type {string} */ line) => process.stdout.write(`${line}\n`)

/** Server processes still running; stopped first at the end, and on SIGINT/SIGTERM. */
/** @type {Array<import('./service-process.mjs').ServerProcess>} */
const running = []
/** Then these are undone, in reverse order: databases, Redis keys, the temporary directory. */
/** @type {Array<() => Promise<unknown>>} */
const cleanups = []
let cleaningUp = false
const cleanUp = async () => {
  if (cleaningUp) return
  cleaningUp = true
  await Promise.all(running.map((server) => server.stop().catch((error) => log(`stop failed: ${error}`))))
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => log(`cleanup failed: ${error}`))
}
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    log(`\n${signal}: stopping`)
    cleanUp().finally(() => process.exit(130))
  })
}

const machine = describeMachine()
log(
  `Tessera benchmark${settings.quick ? ' --quick (short phases, a smaller large store: figures are indicative only)' : ''}` +
    `${settings.startupOnly ? ' --startup-only (the cold-start phase alone)' : ''}`,
)
log(
  `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node.js ${machine.node}, ${machine.os}`,
)
log(
  `Argon2id m=${settings.argon2.memoryKiB} KiB t=${settings.argon2.timeCost} p=${settings.argon2.parallelism}, ` +
    `hash concurrency ${settings.hashConcurrency}; ${settings.pairs} A/B pairs per ratio ` +
    `(${settings.startupPairs} per cold-start ratio); LOG_LEVEL=warn`,
)

/** @type {string[]} */
const skipped = []
/**
 * Where PostgreSQL and Redis answer, or null (and the reason among `skipped`): asked once, before anything is
 * measured, so that a run without them says so at once.
 */
const postgres = await (async () => {
  if (settings.startupOnly) return null
  if (settings.postgres === null) {
    skipped.push(/** @type {string} */ (settings.postgresSkipReason))
    log(settings.postgresSkipReason ?? '')
    return null
  }
  const { databaseUrl, redisUrl } = settings.postgres
  const why = await unavailable(databaseUrl, redisUrl)
  if (why !== null) {
    const reason = `PostgreSQL + Redis run skipped: ${why}`
    skipped.push(reason)
    log(reason)
    return null
  }
  log(`${POSTGRES}: ${shown(databaseUrl)} and ${shown(redisUrl)}`)
  return settings.postgres
})()

/** @type {import('./rows.mjs').Row[]} */
const rows = []
/** @type {unknown} the error that ended the run early, if any */
let failure = null
try {
  const tmp = await mkdtemp(join(tmpdir(), 'tessera-bench-'))
  cleanups.push(() => rm(tmp, { recursive: true, force: true }))

  // start-up first, while no other server of the run is up: process start to the first GET /health answer
  {
    const phaseStartedAt = Date.now()
    rows.push(...(await benchmarkStartup({ backend: EMBEDDED, settings, log }, tmp)))
    log(`${EMBEDDED}: the cold starts took ${Math.round((Date.now() - phaseStartedAt) / 1000)} s`)
  }
  if (!settings.startupOnly) {
    const secret = jwtSecret()
    /** @param {Record<string, string>} extra */
    const serviceEnv = (extra) => serviceVariables(settings, secret, extra)
    const passwordHash = await seedPasswordHash(settings.argon2)
    /**
     * @param {string} name
     * @param {Record<string, string>} env
     */
    const start = async (name, env) => {
      const service = await startService(name, env)
      running.push(service)
      return service
    }

    /**
     * The large-store comparison: a service on settings.baselineUsers accounts beside one on settings.scaledUsers.
     * @param {import('./scenarios.mjs').Context} context
     * @param {string} label
     * @param {(size: 'small' | 'large', count: number) => Promise<Record<string, string>>} seededEnv
     */
    const compareSizes = async (context, label, seededEnv) => {
      const smallEnv = await seededEnv('small', settings.baselineUsers)
      const largeEnv = await seededEnv('large', settings.scaledUsers)
      const small = await start(`tessera (${label}, small)`, smallEnv)
      const large = await start(`tessera (${label}, large)`, largeEnv)
      const rows = await compareScale(context, small, large)
      await Promise.all([small.stop(), large.stop()])
      return rows
    }

    // the settings an operator turns on, each served beside the default service on the same store; the EdDSA key is
    // made once for the run
    const eddsa =
      settings.figures.embedded.includes('eddsa') || settings.figures.postgres.includes('eddsa')
        ? await eddsaAccessTokens(tmp)
        : null
    /**
     * The settings comparison: the default service and one service per setting of `figures`, all on the store of
     * `env` at the same time; a setting with `ownStores` instead beside a default service of its own, each on a fresh
     * store made by `freshEnv(name)`.
     * @param {import('./scenarios.mjs').Context} context
     * @param {string} label
     * @param {Record<string, string>} env
     * @param {import('./settings.mjs').Figure[]} figures
     * @param {(name: string) => Promise<Record<string, string>>} freshEnv
     */
    const compareSettingsOn = async (context, label, env, figures, freshEnv) => {
      const selected = [PER_DEVICE_SESSIONS, eddsa, NO_AUDIT_TRAIL].flatMap((setting) =>
        setting !== null && figures.includes(setting.figure) ? [setting] : [],
      )
      /** @type {import('./rows.mjs').Row[]} */
      const rows = []
      const shared = selected.filter((setting) => setting.ownStores !== true)
      if (shared.length > 0) rows.push(...(await sideBySide(context, label, env, env, shared)))
      for (const setting of selected.filter((each) => each.ownStores === true)) {
        const baseEnv = await freshEnv('defaults')
        rows.push(...(await sideBySide(context, label, baseEnv, await freshEnv(setting.figure), [setting])))
      }
      return rows
    }

    /**
     * The default service on `baseEnv` and one service per setting on `settingEnv` with the setting's variables, all
     * at the same time, compared side by side, then stopped.
     * @param {import('./scenarios.mjs').Context} context
     * @param {string} label
     * @param {Record<string, string>} baseEnv
     * @param {Record<string, string>} settingEnv
     * @param {import('./setting-figures.mjs').Setting[]} selected
     */
    const sideBySide = async (context, label, baseEnv, settingEnv, selected) => {
      // one after the other: each start migrates a shared store (nothing is left to apply) under its lock
      const base = await start(`tessera (${label}, defaults)`, baseEnv)
      const variants = []
      for (const setting of selected) {
        variants.push({
          setting,
          service: await start(`tessera (${label}, ${setting.name})`, { ...settingEnv, ...setting.env }),
        })
      }
      const rows = await compareSettings(context, base, variants)
      await Promise.all(
        [base, ...variants.map((variant) => variant.service)].map((service) => service.stop()),
      )
      return rows
    }

    const bare = await startBareFastify()
    running.push(bare)
    // the HTTPS phase: one certificate for the service and its bare Fastify ceiling
    const httpsOn = settings.figures.embedded.includes('https')
    const tls = httpsOn ? await makeCertificate(tmp) : null
    const bareHttps = tls === null ? null : await startBareFastify(tls)
    if (bareHttps !== null) running.push(bareHttps)

    // the embedded default: SQLite in DATA_DIR, DATABASE_URL unset
    {
      const context = { backend: EMBEDDED, settings, bare, log, runId }
      /** @param {string} name */
      const sqliteEnv = (name) => serviceEnv({ DATA_DIR: join(tmp, name) })
      /**
       * @param {string} name
       * @param {number} count
       */
      const seeded = async (name, count) => {
        log(`${EMBEDDED}: seeding ${count.toLocaleString('en-US')} accounts (${name})`)
        await seedSqliteStore(join(tmp, name), { count, passwordHash, serviceEnv: sqliteEnv(name), log })
        return sqliteEnv(name)
      }
      const service = await start('tessera (SQLite)', await seeded('sqlite', settings.baselineUsers))
      rows.push(
        ...(await benchmarkService(context, service, {
          ...TARGETS.embedded,
          figures: settings.figures.embedded,
          refreshFloorRedis: null,
        })),
      )
      await service.stop()

      if (tls !== null && bareHttps !== null) {
        // the same store, served over HTTPS
        const https = await start('tessera (SQLite, HTTPS)', { ...sqliteEnv('sqlite'), ...tls })
        const tokens = await accessTokens(https.url, settings.httpConnections, settings.baselineUsers)
        rows.push(...(await benchmarkHttps(context, https, bareHttps, tokens)))
        await https.stop()
      }

      rows.push(
        ...(await compareSettingsOn(
          context,
          'SQLite',
          sqliteEnv('sqlite'),
          settings.figures.embedded,
          (name) => seeded(`sqlite-settings-${name}`, settings.baselineUsers),
        )),
      )

      rows.push(...(await compareSizes(context, 'SQLite', (size, count) => seeded(`sqlite-${size}`, count))))

      if (settings.figures.embedded.includes('flood')) {
        // last: the flood's closed connections leave the kernel busy for a while; its own service serves
        // /openapi.json, the largest answer there is
        const flooded = await start('tessera (SQLite, pipelined flood)', {
          ...sqliteEnv('sqlite'),
          API_DOCS: 'true',
        })
        rows.push(await benchmarkFlood(context, flooded))
        await flooded.stop()
      }
    }

    // PostgreSQL + Redis: a fresh database per store and a unique key prefix, removed at the end
    if (postgres !== null) {
      const { redisUrl } = postgres
      const context = { backend: POSTGRES, settings, bare, log, runId }
      /** @param {string} name */
      const seeded = async (name, /** @type {number} */ count) => {
        const { database, databaseUrl, variables } = await serverStore(postgres, `${runId}_${name}`, cleanups)
        const env = serviceEnv({ DATA_DIR: join(tmp, `postgres-${name}`), ...variables })
        log(`${POSTGRES}: seeding ${count.toLocaleString('en-US')} accounts (database ${database})`)
        await seedPostgresStore(databaseUrl, { count, passwordHash, serviceEnv: env, log })
        return env
      }
      const mainEnv = await seeded('main', settings.baselineUsers)
      const service = await start('tessera (PostgreSQL + Redis)', mainEnv)
      rows.push(
        ...(await benchmarkService(context, service, {
          ...TARGETS.postgres,
          figures: settings.figures.postgres,
          // the refresh floor rotates in Redis, where the service keeps sessions; its keys go with the run's
          refreshFloorRedis: { url: redisUrl, keyPrefix: `tessera-bench-${runId}-floor:` },
        })),
      )
      await service.stop()
      rows.push(
        ...(await compareSettingsOn(context, 'PostgreSQL', mainEnv, settings.figures.postgres, (name) =>
          seeded(`settings_${name.replace(/\W+/g, '_')}`, settings.baselineUsers),
        )),
      )
      if (settings.postgresScale) {
        rows.push(...(await compareSizes(context, 'PostgreSQL', seeded)))
      } else {
        const reason = `${POSTGRES}: the large-store comparison runs on the embedded default only in --quick`
        skipped.push(reason)
        log(reason)
      }
    }
  }
} catch (error) {
  failure = error
} finally {
  await cleanUp()
}

const durationSeconds = (Date.now() - startedAt.getTime()) / 1000
if (rows.length > 0) {
  // the cold starts load nothing: their failures end the run
  if (!settings.startupOnly) rows.push(errorsRow(rows))
  /** @type {import('./report.mjs').RunReport} */
  const report = {
    startedAt: startedAt.toISOString(),
    durationSeconds,
    quick: settings.quick,
    startupOnly: settings.startupOnly,
    complete: failure === null,
    machine,
    configuration: describeConfiguration(settings),
    rows,
    skipped,
  }
  log('')
  log(textTable(rows))
  log('')
  for (const reason of skipped) log(reason)
  const missed = missedTargets(rows)
  if (missed.length === 0) log('Every target holds.')
  else {
    log(`MISSED TARGETS (${missed.length}):`)
    for (const row of missed) log(`  - ${describeMiss(row)}`)
  }
  const written = await writeResults(report)
  log(`\nWritten ${written.json} and ${written.markdown}`)
  if (!settings.quick && !settings.startupOnly && failure === null) {
    const page = await writePerformancePage(report, { overDocs: settings.writeDocs })
    log(
      `Written ${page}${settings.writeDocs ? '' : ' (docs/performance.md is unchanged: --write-docs rewrites it)'}`,
    )
  } else if (settings.writeDocs) {
    log('docs/performance.md is unchanged: the run did not complete')
  }
  log(`Run took ${Math.round(durationSeconds)} s.`)
}
if (failure !== null) {
  process.stderr.write(
    `\nbenchmark failed: ${failure instanceof Error ? (failure.stack ?? failure.message) : String(failure)}\n`,
  )
  process.exitCode = 1
}
