import { availableParallelism } from 'node:os'
import { type AdminConfig, readAdminConfig } from './config/admin-config.js'
import { type AuditConfig, readAuditConfig } from './config/audit-config.js'
import { type AuthConfig, authWarnings, readAuthConfig } from './config/auth-config.js'
import { createEnvReader, type Env } from './config/env-reader.js'
import { ENVIRONMENTS, type Environment, LOG_LEVELS, type LogLevel } from './config/environment.js'
import { type HttpConfig, httpWarnings, readHttpConfig } from './config/http-config.js'
import { type CodeConfig, type MailConfig, readCodeConfig, readMailConfig } from './config/mail-config.js'
import { type MfaConfig, readMfaConfig } from './config/mfa-config.js'
import { type ProviderConfig, readProviderConfig } from './config/provider-config.js'
import { checkTransport, publicBaseUrl, readServerConfig, type ServerConfig } from './config/server-config.js'
import { readSessionConfig, type SessionConfig } from './config/session-config.js'
import { readSigningConfig, type SigningConfig } from './config/signing-config.js'
import { readStorageConfig, type StorageConfig } from './config/storage-config.js'
import { readWebhookConfig, type WebhookConfig } from './config/webhook-config.js'

export type { AdminConfig } from './config/admin-config.js'
export type { Argon2Params } from './config/auth-config.js'
export { ConfigError } from './config/config-error.js'
export type { Env } from './config/env-reader.js'
export type { Environment, LogLevel } from './config/environment.js'
export type { CodeConfig, MailConfig, RegisterCodeMode } from './config/mail-config.js'
export type { SessionConfig, SessionMode } from './config/session-config.js'
export type { WebhookConfig } from './config/webhook-config.js'

/** The whole configuration, read once from the environment, validated and frozen. */
export interface Config {
  env: Environment
  server: ServerConfig
  auth: AuthConfig
  /** AUTH_SESSIONS and the reuse settings (docs/api.md §3). */
  sessions: SessionConfig
  /** AUTH_JWT_ALGORITHM, its keys and AUTH_JWT_ISSUER: how access tokens are signed (docs/api.md §2.3, §5.5). */
  signing: SigningConfig
  storage: StorageConfig
  audit: AuditConfig
  /** SMTP_URL, MAIL_*: how mail leaves the service (docs/api.md §6.4). */
  mail: MailConfig
  /** EMAIL_CODE_*, AUTH_REGISTER_CODE: the one-time e-mail codes (docs/api.md §4.14). */
  codes: CodeConfig
  /** MFA_ISSUER, WEBAUTHN_RP_ID: second factors and passkeys (docs/api.md §4.25, §4.26). */
  mfa: MfaConfig
  /** ADMIN_ROLE, ADMIN_REQUIRE_MFA: who may use the admin API (docs/api.md §4.27). */
  admin: AdminConfig
  /** WEBHOOK_*: the events posted to the application (docs/api.md §6.5). */
  webhooks: WebhookConfig
  http: HttpConfig
  logLevel: LogLevel
  /** A site presentation configuration (spec 2.6) to load and validate at start; null when unset. */
  siteConfigFile: string | null
  /** OAUTH_PROVIDERS, their OAUTH_<NAME>_* settings and FRONTEND_ORIGIN: sign-in with providers (docs/api.md §4.24). */
  providers: ProviderConfig
}

/** What the configuration is read for. */
export interface LoadConfigOptions {
  /**
   * Whether the process will listen for clients (`tessera serve`, the default). A command that opens no port
   * (`tessera users`, `audit`, `migrate`) is not held to the rules of listening: production's HTTPS rule (R5.7.1).
   */
  listens?: boolean
}

/**
 * Reads and validates the configuration from environment variables (docs/configuration.md lists them), one section after the
 * other. Every variable is trimmed and an empty one is unset. Throws a ConfigError naming the first variable with a
 * bad value. Performs no I/O.
 */
export function loadConfig(env: Env, options: LoadConfigOptions = {}): Readonly<Config> {
  const read = createEnvReader(env)
  const nodeEnv = read.oneOf('NODE_ENV', ENVIRONMENTS, 'development')
  const cores = availableParallelism()
  const server = readServerConfig(read, cores)
  const mail = readMailConfig(read, nodeEnv)
  const sections = {
    env: nodeEnv,
    server,
    auth: readAuthConfig(read, { env: nodeEnv, cores, workers: server.workers }),
    sessions: readSessionConfig(read),
    signing: readSigningConfig(read, { env: nodeEnv, publicUrl: server.publicUrl }),
    storage: readStorageConfig(read),
    audit: readAuditConfig(read),
    admin: readAdminConfig(read),
    mail,
    codes: readCodeConfig(read, mail),
    webhooks: readWebhookConfig(read, nodeEnv),
    http: readHttpConfig(read, nodeEnv),
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    siteConfigFile: read.optional('SITE_CONFIG_FILE'),
  }
  // after the server and HTTP sections: the redirect URIs are made from PUBLIC_URL and BASE_PATH
  const providers = readProviderConfig(read, { env: nodeEnv, publicBaseUrl: publicBaseUrl(sections) })
  const config: Config = {
    ...sections,
    // after the providers: passkeys' relying party is made of FRONTEND_ORIGIN and PUBLIC_URL
    mfa: readMfaConfig(read, {
      env: nodeEnv,
      productName: mail.productName,
      publicUrl: server.publicUrl,
      frontendOrigin: providers.frontendOrigin,
      frontendOriginSet: read.optional('FRONTEND_ORIGIN') !== null,
    }),
    providers,
  }
  // after every section: it weighs TLS_CERT_FILE against TRUST_PROXY and HOST
  if (options.listens ?? true) checkTransport(server, nodeEnv)
  return deepFreeze(config)
}

/** Values that are allowed but outside the recommended ranges; the server logs each as a warning. */
export function configWarnings(config: Config): string[] {
  return [
    ...authWarnings(config.auth, config.env),
    ...httpWarnings(config.http, config.env),
    ...config.mfa.warnings,
  ]
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
