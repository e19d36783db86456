import { type DestinationStream, type Logger, pino } from 'pino'
import type { LogLevel } from './config/environment.js'

/**
 * Paths pino blanks out wherever they appear: a second line of defence, since no log call passes a body or
 * headers. Tokens, passwords and the Authorization header never reach a log line.
 */
const REDACT = [
  'password',
  'access_token',
  'refresh_token',
  'authorization',
  '*.password',
  '*.access_token',
  '*.refresh_token',
  '*.authorization',
  'req.headers.authorization',
  'headers.authorization',
]

/** The service's structured JSON logger (pino, also Fastify's). */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT, censor: '[redacted]' } }
  return destination ? pino(options, destination) : pino(options)
}
