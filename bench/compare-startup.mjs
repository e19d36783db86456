// bench:compare's start-up figures: the three cold starts of startup-figures.mjs (development on a fresh and on an
// existing data directory, production on an existing one) of each build, each round beside a cold start of bare
// Fastify. Each build starts data directories of its own: the two builds may migrate differently.
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { compareRounds } from './compare-rounds.mjs'
import { coldStartBareFastify, coldStartService } from './service-process.mjs'
import { jwtSecret } from './settings.mjs'
import {
  BARE_COLD_START,
  developmentVariables,
  EXISTING_FIGURE,
  FRESH_FIGURE,
  PRODUCTION_FIGURE,
  productionVariables,
} from './startup-figures.mjs'

/**
 * @param {object} options
 * @param {Array<{ name: string, tessera: string }>} options.builds this build first; `tessera` is its bin/tessera.js
 * @param {number} options.rounds
 * @param {string} options.tmp where the data directories are made (the caller removes it)
 * @param {(line: string) => void} log
 * @returns {Promise<import('./compare-rounds.mjs').Comparison[]>}
 */
export async function compareStartup(options, log) {
  const { builds, rounds, tmp } = options
  const secret = jwtSecret()
  /**
   * @param {number} build
   * @param {string} name
   */
  const dataDir = async (build, name) => {
    const dir = join(tmp, 'startup', `build-${build}`, name)
    await mkdir(dir, { recursive: true })
    return dir
  }
  /**
   * @param {number} build
   * @param {Record<string, string>} env
   */
  const start = (build, env) =>
    coldStartService(env, { tessera: /** @type {(typeof builds)[number]} */ (builds[build]).tessera })

  // not measured: the first start of each reads its files from disk; the production directory's first start migrates it
  log('warming up the cold starts')
  await coldStartBareFastify()
  /** @type {string[]} each build's production data directory */
  const productionDirs = []
  for (const [build] of builds.entries()) {
    await start(build, developmentVariables(await dataDir(build, 'warm-up')))
    productionDirs[build] = await dataDir(build, 'production')
    await start(build, productionVariables(/** @type {string} */ (productionDirs[build]), secret))
  }

  const common = {
    limit: BARE_COLD_START.replace(/ ms$/, ''),
    unit: ' ms',
    lowerIsBetter: true,
    names: builds.map((build) => build.name),
    rounds,
    measureLimit: () => coldStartBareFastify(),
  }
  /** @type {string[][]} each build's fresh data directory of each round, started again as an existing one */
  const freshDirs = builds.map(() => [])
  const fresh = await compareRounds(
    {
      ...common,
      figure: FRESH_FIGURE,
      measure: async (build, round) => {
        const dir = await dataDir(build, `round-${round + 1}`)
        freshDirs[build]?.push(dir)
        return start(build, developmentVariables(dir))
      },
    },
    log,
  )
  const existing = await compareRounds(
    {
      ...common,
      figure: EXISTING_FIGURE,
      measure: (build, round) => {
        const dir = freshDirs[build]?.[round]
        if (dir === undefined) throw new Error(`no data directory was started fresh in round ${round + 1}`)
        return start(build, developmentVariables(dir))
      },
    },
    log,
  )
  const production = await compareRounds(
    {
      ...common,
      figure: PRODUCTION_FIGURE,
      measure: (build) =>
        start(build, productionVariables(/** @type {string} */ (productionDirs[build]), secret)),
    },
    log,
  )
  return [fresh, existing, production]
}
