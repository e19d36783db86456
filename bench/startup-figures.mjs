// Start-up: `tessera serve` from process start to its first GET /health answer, as a developer's first run starts it
// on a fresh data directory (the migrations run and the development secret is created) and on an existing one (the
// same directory started a second time), and as production starts it on an existing data directory, each alternated
// with a bare Fastify server's cold start. Absolute times differ several-fold between machines and drift on one, so
// the figure is the ratio, and its target an upper bound (issue 34).
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { alternate } from './pairs.mjs'
import { coldStartRow, ratioTarget } from './rows.mjs'
import { coldStartBareFastify, coldStartService } from './service-process.mjs'
import { jwtSecret } from './settings.mjs'

export const BARE_COLD_START = 'bare Fastify cold start ms'
export const FRESH_FIGURE = 'tessera serve to first GET /health, fresh data directory'
export const EXISTING_FIGURE = 'tessera serve to first GET /health, existing data directory'
export const PRODUCTION_FIGURE = 'tessera serve to first GET /health, production, existing data directory'
/** Each cold start of the service takes at most twice bare Fastify's (issue 34). */
export const COLD_START_RATIO = 2.0

/**
 * The variables of a developer's first `npx tessera serve`: the embedded default, no secret (the development one is
 * created in the data directory).
 * @param {string} dataDir
 * @returns {Record<string, string>}
 */
export function developmentVariables(dataDir) {
  return { NODE_ENV: 'development', LOG_LEVEL: 'warn', WORKERS: '1', DATA_DIR: dataDir }
}

/**
 * The variables of a production start on the embedded default: NODE_ENV=production and a strong AUTH_JWT_SECRET.
 * @param {string} dataDir
 * @param {string} secret
 * @returns {Record<string, string>}
 */
export function productionVariables(dataDir, secret) {
  return {
    NODE_ENV: 'production',
    AUTH_JWT_SECRET: secret,
    LOG_LEVEL: 'warn',
    WORKERS: '1',
    DATA_DIR: dataDir,
  }
}

/**
 * @param {{ backend: string, settings: import('./settings.mjs').Settings, log: (line: string) => void }} context
 * @param {string} tmp a directory the phase may create its data directories in (removed when it ends)
 * @returns {Promise<import('./rows.mjs').Row[]>}
 */
export async function benchmarkStartup(context, tmp) {
  const { backend, settings, log } = context
  const root = join(tmp, 'startup')
  /** @param {string} name a new, empty data directory */
  const dataDir = async (name) => {
    const dir = join(root, name)
    await mkdir(dir, { recursive: true })
    return dir
  }
  const secret = jwtSecret()
  const target = ratioTarget('<=', COLD_START_RATIO)
  try {
    // not measured: the first start of each reads its files from disk rather than from the page cache; the production
    // directory's first start migrates it, so that every measured start finds it existing
    log(`${backend}: warming up the cold starts`)
    await coldStartBareFastify()
    await coldStartService(developmentVariables(await dataDir('warm-up')))
    const productionDir = await dataDir('production')
    await coldStartService(productionVariables(productionDir, secret))

    /** @type {string[]} one data directory per pair, started fresh and then again as an existing one */
    const dirs = []
    /** @param {string} figure */
    const logged = (figure) => ({
      /** @param {number} pair */
      bare: async (pair) => {
        const value = await coldStartBareFastify()
        log(`${backend} · pair ${pair + 1} · A ${BARE_COLD_START}: ${Math.round(value)}`)
        return { value }
      },
      /**
       * @param {number} pair
       * @param {() => Promise<Record<string, string>>} variables
       */
      service: async (pair, variables) => {
        const value = await coldStartService(await variables())
        log(`${backend} · pair ${pair + 1} · B ${figure}: ${Math.round(value)} ms`)
        return { value }
      },
    })

    const fresh = logged(FRESH_FIGURE)
    const freshRun = await alternate(settings.startupPairs, fresh.bare, (pair) =>
      fresh.service(pair, async () => {
        dirs[pair] = await dataDir(`pair-${pair + 1}`)
        return developmentVariables(dirs[pair])
      }),
    )
    const existing = logged(EXISTING_FIGURE)
    const existingRun = await alternate(settings.startupPairs, existing.bare, (pair) =>
      existing.service(pair, async () => {
        const dir = dirs[pair]
        if (dir === undefined) throw new Error(`no data directory was started fresh for pair ${pair + 1}`)
        return developmentVariables(dir)
      }),
    )
    const production = logged(PRODUCTION_FIGURE)
    const productionRun = await alternate(settings.startupPairs, production.bare, (pair) =>
      production.service(pair, async () => productionVariables(productionDir, secret)),
    )
    return [
      coldStartRow(backend, FRESH_FIGURE, freshRun, BARE_COLD_START, target),
      coldStartRow(backend, EXISTING_FIGURE, existingRun, BARE_COLD_START, target),
      coldStartRow(backend, PRODUCTION_FIGURE, productionRun, BARE_COLD_START, target),
    ]
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}
