// Start-up: `tessera serve` from process start to its first GET /health answer, on a fresh data directory (the
// migrations run and the development secret is created) and on an existing one (the same directory started a second
// time), each alternated with a bare Fastify server's cold start. Absolute times differ several-fold between machines
// and drift on one, so the figure is the ratio; it has no target yet: later work drives it down.
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { alternate } from './pairs.mjs'
import { coldStartRow } from './rows.mjs'
import { coldStartBareFastify, coldStartService } from './service-process.mjs'

const BARE_LIMIT = 'bare Fastify cold start ms'

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
  /** @param {string} dir the service on its embedded default, as a developer's first `npx tessera serve` runs it */
  const serve = (dir) =>
    coldStartService({ NODE_ENV: 'development', LOG_LEVEL: 'warn', WORKERS: '1', DATA_DIR: dir })
  try {
    // not measured: the first start of each reads its files from disk rather than from the page cache
    log(`${backend}: warming up the cold starts`)
    await coldStartBareFastify()
    await serve(await dataDir('warm-up'))

    /** @type {string[]} one data directory per pair, started fresh and then again as an existing one */
    const dirs = []
    /** @param {string} figure */
    const logged = (figure) => ({
      /** @param {number} pair */
      bare: async (pair) => {
        const value = await coldStartBareFastify()
        log(`${backend} · pair ${pair + 1} · A ${BARE_LIMIT}: ${Math.round(value)}`)
        return { value }
      },
      /**
       * @param {number} pair
       * @param {() => Promise<string>} dir
       */
      service: async (pair, dir) => {
        const value = await serve(await dir())
        log(`${backend} · pair ${pair + 1} · B ${figure}: ${Math.round(value)} ms`)
        return { value }
      },
    })

    const freshFigure = 'tessera serve to first GET /health, fresh data directory'
    const fresh = logged(freshFigure)
    const freshRun = await alternate(settings.startupPairs, fresh.bare, (pair) =>
      fresh.service(pair, async () => {
        dirs[pair] = await dataDir(`pair-${pair + 1}`)
        return dirs[pair]
      }),
    )
    const existingFigure = 'tessera serve to first GET /health, existing data directory'
    const existing = logged(existingFigure)
    const existingRun = await alternate(settings.startupPairs, existing.bare, (pair) =>
      existing.service(pair, async () => {
        const dir = dirs[pair]
        if (dir === undefined) throw new Error(`no data directory was started fresh for pair ${pair + 1}`)
        return dir
      }),
    )
    return [
      coldStartRow(backend, freshFigure, freshRun, BARE_LIMIT),
      coldStartRow(backend, existingFigure, existingRun, BARE_LIMIT),
    ]
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}
