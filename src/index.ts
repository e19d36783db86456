// The package's public surface: the pieces another program can embed or test against.
export { buildApp } from './app.js'
export type { Clock } from './clock.js'
export { type CommandIo, runSiteConfigCommand, SITE_CONFIG_USAGE } from './commands/site-config.js'
export { type Config, ConfigError, loadConfig } from './config.js'
export {
  AccessTokenInvalidError,
  AppError,
  AuthorizationMalformedError,
  AuthorizationMissingError,
  TokenWrongTypeError,
} from './errors.js'
export { createService } from './server.js'
export * from './site-config/index.js'
export type {
  RateCount,
  RateCounterStore,
  SessionStore,
  StoredSession,
  Stores,
  UserStore,
} from './storage/stores.js'
export * from './verifier/index.js'
