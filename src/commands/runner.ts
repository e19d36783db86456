import type { Clock } from '../clock.js'
import { type Config, type Env, loadConfig } from '../config.js'
import { oneLine } from '../printable.js'
import { openStores } from '../storage/open-stores.js'
import type { Stores } from '../storage/stores.js'
import { failureMessage } from './command-errors.js'

/** What an operator command that opens the service's stores needs for it: stderr, and where its variables are. */
export interface StoresCommandIo {
  stderr(text: string): void
  /** The time the command reads, and by which the stores it opens record a migration. */
  clock: Clock
  /** The environment, with the variables of the --config file beneath it (config/read-environment.ts). */
  environment(configFile: string | undefined): Promise<Env>
}

export interface OnStoresOptions {
  /** The --config file, if any. */
  configFile: string | undefined
  /** Which stores to open; the service's own (config.storage) unless given. */
  storage?: (config: Config) => Config['storage']
  /** The stderr line of a failure that is no CommandFailedError, OperationFailedError or ConfigError (those say their message). */
  describeFailure: (error: unknown) => string
}

/**
 * The part of `tessera users` and `tessera audit` after their command line is read: loads the service's
 * configuration, opens its stores, runs `work` on them and closes them, whatever happens. Resolves with the exit
 * code: 0, or 1 after one line on stderr, `tessera <command>: <what failed>`.
 */
export async function runOnStores(
  command: string,
  io: StoresCommandIo,
  options: OnStoresOptions,
  work: (stores: Stores, config: Config) => Promise<void>,
): Promise<number> {
  let stores: Stores | null = null
  try {
    // these commands open no port: production's HTTPS rule is the service's, not theirs
    const config = loadConfig(await io.environment(options.configFile), { listens: false })
    // a mistyped DATABASE_URL is refused, not created empty
    stores = await openStores(options.storage?.(config) ?? config.storage, io.clock, undefined, {
      existing: true,
    })
    await work(stores, config)
    return 0
  } catch (error) {
    const message = failureMessage(error) ?? options.describeFailure(error)
    io.stderr(`tessera ${command}: ${oneLine(message.replace(/\s+/g, ' '))}\n`)
    return 1
  } finally {
    await stores?.close().catch(() => {})
  }
}
