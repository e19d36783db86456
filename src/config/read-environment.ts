import { readFile } from 'node:fs/promises'
import { ConfigError } from './config-error.js'
import type { Env } from './env-reader.js'

/**
 * The environment, with the variables of an optional JSON config file beneath it (the environment wins).
 */
export async function readEnvironment(configFile: string | undefined): Promise<Env> {
  if (configFile === undefined) return process.env
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(configFile, 'utf8'))
  } catch (error) {
    throw new ConfigError('--config', `could not be read as JSON: ${(error as Error).message}`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('--config', 'must hold a JSON object of variable names and values')
  }
  const fromFile = Object.fromEntries(Object.entries(parsed).map(([name, value]) => [name, String(value)]))
  return { ...fromFile, ...process.env }
}
