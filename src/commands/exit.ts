import { type Config, type Env, type LoadConfigOptions, loadConfig } from '../config.js'

export function loadConfigOrExit(env: Env, options?: LoadConfigOptions): Config {
  try {
    return loadConfig(env, options)
  } catch (error) {
    exitWithError(error)
  }
}

/** One line on stderr, naming the variable for a ConfigError, and a non-zero exit. */
export function exitWithError(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`tessera: ${message}\n`)
  process.exit(1)
}
