/** NODE_ENV: what the process runs as; production holds it to the strictest rules. */
export type Environment = 'development' | 'production' | 'test'

export const ENVIRONMENTS: readonly Environment[] = ['development', 'production', 'test']

/** LOG_LEVEL: pino's levels, and silent. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
