import { systemClock } from '../clock.js'
import type { Env } from '../config.js'
import { migrateDatabase } from '../storage/open-stores.js'
import { exitWithError, loadConfigOrExit } from './exit.js'

/** `tessera migrate`: applies pending migrations and exits. */
export async function runMigrations(env: Env): Promise<void> {
  // opens no port: production's HTTPS rule does not apply
  const config = loadConfigOrExit(env, { listens: false })
  try {
    const applied = await migrateDatabase(config.storage, systemClock)
    console.log(applied.length === 0 ? 'database is up to date' : `applied ${applied.join(', ')}`)
  } catch (error) {
    exitWithError(error)
  }
}
