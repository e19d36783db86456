import cluster from 'node:cluster'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { createAdminGuard } from './admin/admin-guard.js'
import { createAdminService } from './admin/admin-service.js'
import { buildApp } from './app.js'
import { readAppInfo } from './app-info.js'
import { createAuditReader } from './audit/audit-reader.js'
import { type AuditSink, createAuditSink } from './audit/audit-sink.js'
import { createAccountEvents } from './auth/account-events.js'
import { createAccountService } from './auth/account-service.js'
import { createEmailAccountService } from './auth/email-account-service.js'
import { createEmailCodes } from './auth/email-codes.js'
import { createLoginThrottle, LOGIN_THROTTLE_DEFAULTS } from './auth/login-throttle.js'
import { createOneTimeTickets } from './auth/one-time-tickets.js'
import { openPasswordHashing } from './auth/password-hasher.js'
import { createSessionStarter } from './auth/session-starter.js'
import { createTokenService } from './auth/token-service.js'
import { createUserAdmin } from './auth/user-admin.js'
import { createAvatarService } from './avatars/avatar-service.js'
import { type Clock, systemClock } from './clock.js'
import { type Config, ConfigError } from './config.js'
import { guardConnections } from './http/connection-guard.js'
import { readOpenFileLimit } from './http/file-descriptor-limit.js'
import { readTlsMaterial } from './http/tls.js'
import { trustedProxies } from './http/trusted-proxies.js'
import { type OpenedMail, openMail } from './mail/open-mail.js'
import { createFactorSecrets } from './mfa/factor-secrets.js'
import { createMfaService } from './mfa/mfa-service.js'
import { createPasskeyService } from './mfa/passkeys.js'
import { createProfileService } from './profile/profile-service.js'
import { createProviderClients } from './providers/provider-clients.js'
import { createProviderSignIn } from './providers/provider-sign-in.js'
import { createSignInFlow } from './providers/sign-in-flow.js'
import { createSignInTickets } from './providers/sign-in-state.js'
import { securityEventRecorder } from './security-event.js'
import { createSessionService } from './sessions/session-service.js'
import { SiteConfigFileError, SiteConfigInvalidError } from './site-config/site-config-errors.js'
import type { SiteConfig } from './site-config/site-config-schema.js'
import { createExpiryPruner } from './storage/expiry-pruner.js'
import { createMemoryLoginAttemptStore } from './storage/memory/memory-login-attempt-store.js'
import { openStores } from './storage/open-stores.js'
import type { Stores } from './storage/stores.js'
import { type OpenedWebhooks, openWebhooks } from './webhooks/open-webhooks.js'
import type { WebhookPublisher } from './webhooks/webhook-publisher.js'
import { webhookTargets } from './webhooks/webhook-urls.js'

export interface Service {
  app: FastifyInstance
  stores: Stores
  /** Where GET /metrics is served (METRICS_PORT); null when it is not, or by the primary of WORKERS > 1. */
  metricsUrl: string | null
  /** The security events on their way to the audit trail. */
  auditSink: AuditSink
  /** The webhook events' publisher (docs/api.md §6.5); one that does nothing without WEBHOOK_URLS. */
  webhooks: WebhookPublisher
  /**
   * Starts the work that can wait until the port is open, so that none of it competes with the start-up for the
   * cores (docs/performance.md, issue 34): the Argon2 threads and the dummy hash, the mail and webhook senders, the
   * expiry pruner, the audit trail's retention, and the second-factor data key's sealing. `tessera serve` calls it a
   * second after it listens; until then the Argon2 threads start with the first computation, and nothing is
   * delivered or pruned. Once only, and not once close() has begun.
   */
  start(): void
  /** Closes the HTTP server (in-flight requests finish), writes the pending audit events, closes the stores. */
  close(): Promise<void>
}

export interface ServiceOptions {
  logger: Logger
  /** The signing secret when config.auth.jwtSecret is null (the persisted development secret). */
  jwtSecret?: string
  clock?: Clock
  appInfo?: { name: string; version: string }
  /** Stores already opened (and migrated); by default they are opened from config.storage. */
  stores?: Stores
}

/** The composition root: stores, the auth domain and the HTTP app, wired from one configuration. */
export async function createService(config: Config, options: ServiceOptions): Promise<Service> {
  const secret = config.auth.jwtSecret ?? options.jwtSecret
  if (secret === undefined) throw new ConfigError('AUTH_JWT_SECRET', 'is not set')
  const clock = options.clock ?? systemClock
  const siteConfig = await loadSiteConfig(config)
  const tls = config.server.tls === null ? null : await readTlsMaterial(config.server.tls)
  // AUTH_JWT_ALGORITHM EdDSA or ES256: the access-token keys, read (in development made) before any store is opened;
  // jose, which gives them their kid and JWK, is loaded only then
  const accessTokenKeys =
    config.signing.algorithm === 'HS256'
      ? null
      : await (await import('./auth/access-token-keys.js')).loadAccessTokenKeys(config)
  const opened = options.stores ?? (await openStores(config.storage, clock, options.logger))
  // METRICS_PORT: prom-client is loaded, and requests and store calls are counted, only when it is set
  const metricsListen = config.server.metrics
  const metrics = metricsListen === null ? null : (await import('./metrics/metrics.js')).createMetrics()
  const stores = metrics === null ? opened : metrics.stores.meter(opened)
  const hashing = openPasswordHashing({
    params: config.auth.argon2,
    threads: config.auth.hashConcurrency,
    queueLimit: config.auth.hashQueueLimit,
    observer: metrics?.argon2.observer,
  })
  // docs/api.md "Audit events": written in batches off the request path, pruned at start and hourly
  const auditSink = createAuditSink({
    store: config.audit.retentionDays === 0 ? null : stores.audit,
    log: options.logger,
    retentionMs: config.audit.retentionDays * 86_400_000,
    clock,
  })
  // expired e-mail codes, ended counter windows, sign-in tickets and second factors left pending: removed at start
  // and every minute, mail or none
  const pruner = createExpiryPruner({
    codes: stores.codes,
    counters: stores.sharedCounters,
    tickets: stores.tickets,
    factors: stores.factors,
    clock,
    log: options.logger,
  })
  let mail: OpenedMail | null = null
  let webhooks: OpenedWebhooks | null = null
  try {
    const tokens = createTokenService(
      {
        secret,
        previousSecrets: config.auth.previousJwtSecrets,
        accessTokenTtlSeconds: config.auth.accessTokenTtlSeconds,
        refreshTokenTtlSeconds: config.auth.refreshTokenTtlSeconds,
        accessTokenKeys,
        issuer: config.signing.issuer,
      },
      clock,
    )
    metrics?.argon2.watch(hashing.limiter)
    const throttle = createLoginThrottle({
      store: stores.loginAttempts ?? createMemoryLoginAttemptStore(),
      // a shared store that fails is replaced by counts in this process (docs/api.md R8.4)
      fallback: stores.loginAttempts === null ? null : createMemoryLoginAttemptStore(),
      settings: {
        ...LOGIN_THROTTLE_DEFAULTS,
        addressFailuresPerMinute: config.http.rateLimitPerMinute,
        accountFreeFailures: config.auth.loginBackoff.afterFailures,
        accountMaxDelayMs: config.auth.loginBackoff.maxDelaySeconds * 1000,
      },
      clock,
    })
    // docs/api.md §6.4: the outbox, its sender (started once the service is up) and the templates, checked now
    mail = await openMail({
      config,
      stores,
      clock,
      log: options.logger,
      events: auditSink,
      secret,
      previousSecrets: config.auth.previousJwtSecrets,
      observer: metrics?.mail ?? null,
    })
    metrics?.mail.watch(stores.outbox, clock)
    // docs/api.md §6.5: the webhook lane of the outbox, its sender (started with the mail's) and the publisher
    webhooks = await openWebhooks({
      config,
      stores,
      clock,
      log: options.logger,
      events: auditSink,
      observer: metrics?.webhooks ?? null,
    })
    metrics?.webhooks.watch(stores.outbox, webhookTargets(config.webhooks.urls), clock)
    // the events of every change of an account, queued before its answer (docs/api.md R6.5.9 to R6.5.12)
    const accountEvents = createAccountEvents({
      publisher: webhooks.publisher,
      users: stores.users,
      factors: stores.factors,
    })
    const record = securityEventRecorder(auditSink, clock)
    const emailCodes = createEmailCodes({
      codes: stores.codes,
      counters: stores.sharedCounters,
      mailer: mail.mailer,
      config: config.codes,
      secret,
      clock,
      record,
      metrics: metrics?.mail ?? null,
    })
    const accounts = createAccountService({
      users: stores.users,
      sessions: stores.sessions,
      sessionConfig: config.sessions,
      hasher: hashing.hasher,
      tokens,
      clock,
      log: options.logger,
      throttle,
      events: auditSink,
      onReuseDetected: metrics?.sessions.reuseDetected,
      emailCodes,
      registerCode: config.codes.register,
      secondStep: (user, context, firstFactor, login) => mfa.challenge(user, context, firstFactor, login),
      webhooks: webhooks.publisher,
    })
    const sessions = createSessionService({
      store: stores.sessions,
      users: stores.users,
      clock,
      events: auditSink,
      mode: config.sessions.mode,
      webhooks: accountEvents,
    })
    // every way of logging in beside the password's: codes, reset, change, providers
    const startSession = createSessionStarter({
      sessions: stores.sessions,
      users: stores.users,
      tokens,
      sessionConfig: config.sessions,
      clock,
    })
    // docs/api.md §4.25: second factors, whose secrets are sealed under a data key kept in the store
    const factorSecrets = createFactorSecrets({
      keys: stores.serviceKeys,
      secret,
      previousSecrets: config.auth.previousJwtSecrets,
    })
    const oneTimeTickets = createOneTimeTickets({ tickets: stores.tickets, secret, clock })
    const mfa = createMfaService({
      users: stores.users,
      factors: stores.factors,
      secrets: factorSecrets,
      tickets: oneTimeTickets,
      sessions,
      startSession,
      proveHolder: (user, proof, purpose, context) =>
        emailAccounts.proveHolder(user, proof, purpose, context),
      throttle,
      mailer: mail.mailer,
      clock,
      record,
      log: options.logger,
      issuer: config.mfa.issuer,
      observer: metrics?.mfa ?? null,
      webhooks: accountEvents,
    })
    // docs/api.md §4.26: passkeys, when there is a relying party (MfaConfig.relyingParty)
    const relyingParty = config.mfa.relyingParty
    const passkeys =
      relyingParty === null
        ? null
        : createPasskeyService({
            users: stores.users,
            factors: stores.factors,
            tickets: oneTimeTickets,
            mfa,
            startSession,
            relyingParty,
            clock,
            record,
          })
    const emailAccounts = createEmailAccountService({
      users: stores.users,
      providerLinks: stores.providerLinks,
      factors: stores.factors,
      secondStep: mfa.challenge,
      codes: emailCodes,
      // an account's deletion queues its user.deleted event in the deletion's transaction (docs/api.md §6.5)
      stores: { ...stores, webhooks: webhooks.publisher },
      sessions,
      startSession,
      hasher: hashing.hasher,
      throttle,
      mailer: mail.mailer,
      clock,
      record,
      log: options.logger,
      refreshTokenTtlMs: config.auth.refreshTokenTtlSeconds * 1000,
      webhooks: accountEvents,
    })
    const profiles = createProfileService({ users: stores.users, clock, record, webhooks: accountEvents })
    // docs/api.md §4.23: avatars in the SQL database, so that every instance serves each one
    const avatars = createAvatarService({
      avatars: stores.avatars,
      users: stores.users,
      clock,
      log: options.logger,
    })
    // docs/api.md §4.24: sign-in with providers; a provider is fetched from only when a sign-in needs it
    const providerSignIns = createSignInFlow({
      clients: createProviderClients(config.providers.enabled),
      tickets: createSignInTickets({ tickets: stores.tickets, secret, clock }),
      accounts: createProviderSignIn({
        users: stores.users,
        links: stores.providerLinks,
        sessions,
        factors: stores.factors,
        avatars,
        mailer: mail.mailer,
        record,
        log: options.logger,
        clock,
        webhooks: accountEvents,
      }),
      users: stores.users,
      startSession,
      secondStep: mfa.challenge,
      record,
      log: options.logger,
      publicBaseUrl: config.providers.publicBaseUrl,
      frontendOrigin: config.providers.frontendOrigin,
      observer: metrics?.providers ?? null,
    })
    // docs/api.md §4.27: the admin API, through the user admin and the audit reader that the commands use; its acts'
    // events go to the audit sink like every other request's
    const admin = createAdminService({
      guard: createAdminGuard({
        sessions,
        users: stores.users,
        factors: stores.factors,
        role: config.admin.role,
        requireSecondFactor: config.admin.requireMfa,
      }),
      users: createUserAdmin({
        users: stores.users,
        sessions: stores.sessions,
        audit: stores.audit,
        codes: stores.codes,
        outbox: stores.outbox,
        factors: stores.factors,
        clock,
        refreshTokenTtlMs: config.auth.refreshTokenTtlSeconds * 1000,
        record: async (event) => auditSink.record(event),
        adminRole: config.admin.role,
        failures: 'http',
        // each act's webhook events, as tessera users has them (docs/api.md R6.5.9)
        webhooks: accountEvents,
      }),
      audit: createAuditReader({ audit: stores.audit, users: stores.users }),
    })
    // TRUST_PROXY compiled once, for Fastify (whose X-Forwarded-For is believed) and the connection guard alike
    const trustedProxy = trustedProxies(config.server.trustProxy)
    const app = await buildApp({
      config,
      trustedProxy,
      accounts,
      emailAccounts,
      admin,
      mfa,
      passkeys,
      profiles,
      avatars,
      recordSecurityEvent: record,
      accountEvents,
      providerSignIns,
      sessions,
      tokens,
      accessTokenKeys,
      probes: stores.probes,
      rateCounters: stores.rateCounters,
      appInfo: options.appInfo ?? readAppInfo(),
      siteConfig,
      clock,
      logger: options.logger,
      tls,
      requestMetrics: metrics?.requests ?? null,
      answeredBeforeRouting: metrics?.connections.answeredBeforeRouting ?? null,
    })
    // docs/api.md §8: connections in all and per address, pipelined requests, unread answers
    const guard = guardConnections(app.server, config.server, {
      logger: options.logger,
      answeredBeforeRouting: metrics?.connections.answeredBeforeRouting ?? null,
      // the function Fastify was given, and the limit read now, once
      trustedProxy,
      openFileLimit: readOpenFileLimit(),
    })
    metrics?.connections.watch(guard)
    await app.ready()
    const senders = [mail.sender, webhooks.sender]
    // docs/api.md R4.25.4: the data key is read (made, on a new store) and sealed again under a rotated secret once
    // the port is open, so that a previous secret can be removed whether or not a factor was used meanwhile
    const seal = () =>
      factorSecrets.ready().catch((error: unknown) => {
        options.logger.error({ err: error }, 'the second-factor data key could not be opened')
      })
    let sealing: Promise<void> | null = null
    let closing = false
    const exposure =
      metrics === null || metricsListen === null
        ? null
        : await metrics.expose(metricsListen, { inWorker: cluster.isWorker, log: options.logger })
    return {
      app,
      stores,
      metricsUrl: exposure?.url ?? null,
      auditSink,
      webhooks: webhooks.publisher,
      start() {
        if (sealing !== null || closing) return
        hashing.start()
        for (const sender of senders) sender.start()
        pruner.start()
        auditSink.start()
        sealing = seal()
      },
      async close() {
        closing = true
        // in-flight requests finish; a keep-alive connection is closed as soon as its last response is sent
        const reaper = setInterval(() => app.server.closeIdleConnections(), 100)
        try {
          await app.close()
        } finally {
          clearInterval(reaper)
        }
        await exposure?.close()
        // a service stopped before start() had run still seals the data key again
        await (sealing ?? seal())
        // what is in hand is delivered or released before the stores close
        await mail?.sender.close()
        await webhooks?.sender.close()
        await pruner.close()
        await hashing.close()
        await auditSink.close()
        await stores.close()
      },
    }
  } catch (error) {
    await mail?.sender.close()
    await webhooks?.sender.close()
    await pruner.close()
    await hashing.close()
    await auditSink.close()
    await stores.close()
    throw error
  }
}

/**
 * SITE_CONFIG_FILE, read and validated; null when unset. An unreadable or invalid file is a ConfigError whose lines
 * are those `tessera site-config validate` prints.
 */
export async function loadSiteConfig(config: Config): Promise<SiteConfig | null> {
  if (config.siteConfigFile === null) return null
  // loaded only when a file is configured: the validator compiles its schema as it loads
  const { loadSiteConfigFile } = await import('./site-config/load-site-config-file.js')
  try {
    return await loadSiteConfigFile(config.siteConfigFile)
  } catch (error) {
    if (error instanceof SiteConfigInvalidError || error instanceof SiteConfigFileError) {
      throw new ConfigError(
        'SITE_CONFIG_FILE',
        `names a file that is not a valid site configuration:\n${error.message}`,
      )
    }
    throw error
  }
}
