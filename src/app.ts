import cors from '@fastify/cors'
import rateLimit from '@fastify/rate-limit'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { AdminService } from './admin/admin-service.js'
import type { AccessTokenKeys } from './auth/access-token-keys.js'
import { type AccountEvents, NO_ACCOUNT_EVENTS } from './auth/account-events.js'
import type { AccountService } from './auth/account-service.js'
import type { EmailAccountService } from './auth/email-account-service.js'
import type { TokenService } from './auth/token-service.js'
import type { AvatarService } from './avatars/avatar-service.js'
import type { Clock } from './clock.js'
import type { Config } from './config.js'
import { RateLimitedError } from './errors.js'
import { createAdminCheck } from './http/admin-check.js'
import { createAuthenticate } from './http/authenticate.js'
import { countingClientErrors, handleClientError } from './http/client-error.js'
import {
  countingFrameworkErrors,
  createNotFoundHandler,
  createOptionsHook,
  handleError,
  handleFrameworkError,
} from './http/error-handler.js'
import { acceptOnlyJsonBodies } from './http/json-body.js'
import { createLiveSessionCheck } from './http/live-session.js'
import { rateLimitStore } from './http/rate-limit-store.js'
import { createRequestIdGenerator } from './http/request-id.js'
import { LazyChildLogger, RequestLogController } from './http/request-log.js'
import { sharedSchemaController } from './http/schema-compilers.js'
import { ErrorResponse } from './http/schemas.js'
import { addSecurityHeaders, createCredentialsHook } from './http/security-headers.js'
import { httpsServerFactory, type TlsMaterial } from './http/tls.js'
import { type TrustedProxy, trustedProxies } from './http/trusted-proxies.js'
import { ajvOptions, toValidationError } from './http/validation.js'
import type { RequestMetrics } from './metrics/request-metrics.js'
import type { MfaService } from './mfa/mfa-service.js'
import type { PasskeyService } from './mfa/passkeys.js'
import type { ProfileService } from './profile/profile-service.js'
import type { SignInFlow } from './providers/sign-in-flow.js'
import { adminConsoleRoutes } from './routes/admin-console-routes.js'
import { adminRoutes } from './routes/admin-routes.js'
import { accountChangeRoutes, protectedAuthRoutes, publicAuthRoutes } from './routes/auth-routes.js'
import { avatarImageRoutes, protectedAvatarRoutes } from './routes/avatar-routes.js'
import { demoRoutes } from './routes/demo-routes.js'
import { mfaChangeRoutes, protectedMfaRoutes, publicMfaRoutes } from './routes/mfa-routes.js'
import { protectedOAuthRoutes, publicOAuthRoutes } from './routes/oauth-routes.js'
import { passkeyChangeRoutes, publicPasskeyRoutes } from './routes/passkey-routes.js'
import { siteConfigRoutes } from './routes/site-config-routes.js'
import { statusRoutes } from './routes/status-routes.js'
import { wellKnownDocuments, wellKnownRoutes } from './routes/well-known-routes.js'
import type { RecordSecurityEvent } from './security-event.js'
import type { SessionService } from './sessions/session-service.js'
import type { SiteConfig } from './site-config/site-config-schema.js'
import { createMemoryRateCounterStore } from './storage/memory/memory-rate-counter-store.js'
import type { HealthProbe, RateCounterStore } from './storage/stores.js'

export interface AppDeps {
  config: Config
  accounts: AccountService
  /** Codes, sign-in by code, reset, change, verification and deletion (docs/api.md §4.14 to §4.21). */
  emailAccounts: EmailAccountService
  /** Listing and ending sessions: logout, GET /auth/sessions, DELETE /auth/sessions/<id>. */
  sessions: SessionService
  /** PUT /auth/profile (docs/api.md §4.22). */
  profiles: ProfileService
  /** POST and DELETE /auth/avatar, GET /avatars/<id> (docs/api.md §4.23). */
  avatars: AvatarService
  /** Records the security events the routes record themselves (avatar_changed, avatar_removed). */
  recordSecurityEvent: RecordSecurityEvent
  /** The webhook events the routes queue themselves (an avatar's `user.updated`); absent, none. */
  accountEvents?: Pick<AccountEvents, 'updated'>
  /** Second factors (docs/api.md §4.25); absent, their routes are not served. */
  mfa?: MfaService
  /** Passkeys (docs/api.md §4.26); absent (no relying party: MfaConfig.relyingParty), their routes are not served. */
  passkeys?: PasskeyService | null
  /** The admin API (docs/api.md §4.27): every endpoint checks the caller's stored role and session at each request. */
  admin: AdminService
  /** Sign-in with providers (docs/api.md §4.24); absent, its routes are not served. */
  providerSignIns?: SignInFlow
  tokens: Pick<TokenService, 'verifyAccessSubject'>
  /** AUTH_JWT_ALGORITHM EdDSA or ES256: the keys GET /.well-known/jwks.json publishes; absent or null with HS256. */
  accessTokenKeys?: Pick<AccessTokenKeys, 'jwks'> | null
  probes: Readonly<Record<string, HealthProbe>>
  /** Rate-limit counters shared by all instances (Redis); null keeps them per process. */
  rateCounters: RateCounterStore | null
  appInfo: { name: string; version: string }
  /** The validated SITE_CONFIG_FILE, or null when none is configured. */
  siteConfig: SiteConfig | null
  clock: Clock
  logger: FastifyBaseLogger
  /** The certificate and key of TLS_CERT_FILE and TLS_KEY_FILE, read by the caller: HTTPS and HTTP/2; absent, HTTP. */
  tls?: TlsMaterial | null
  /** Counts every request for GET /metrics (METRICS_PORT); absent or null, nothing is counted. */
  requestMetrics?: RequestMetrics | null
  /**
   * Told the status of each request refused before any route (Node's parser, or a path Fastify cannot decode), for
   * GET /metrics; absent or null, nothing is counted.
   */
  answeredBeforeRouting?: ((status: number) => void) | null
  /** TRUST_PROXY compiled (http/trusted-proxies.ts), shared with the connection guard; absent, compiled here. */
  trustedProxy?: TrustedProxy | null
}

/** The HTTP application: Fastify options, error handling and the route table. Performs no I/O of its own. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps
  const app = Fastify({
    loggerInstance: deps.logger,
    logController: new RequestLogController(deps.logger),
    childLoggerFactory: (logger, bindings, options) => new LazyChildLogger(logger, bindings, options),
    bodyLimit: config.server.bodyLimitBytes,
    genReqId: createRequestIdGenerator(),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // TRUST_PROXY, the very function the connection guard is handed (server.ts compiles it once)
    trustProxy:
      (deps.trustedProxy === undefined ? trustedProxies(config.server.trustProxy) : deps.trustedProxy) ??
      false,
    // a slow client cannot hold a connection: the headers, then the whole request, have deadlines
    requestTimeout: config.server.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(config.server.headersTimeoutMs, config.server.requestTimeoutMs),
      // Node checks those deadlines only this often (30 s by default)
      connectionsCheckingInterval: 1_000,
    },
    // docs/api.md §5.7: with TLS_CERT_FILE, HTTPS (HTTP/2, or HTTP/1.1 for a client that does not offer h2)
    ...(deps.tls ? { serverFactory: httpsServerFactory(deps.tls, config.server) } : {}),
    // finish what is in flight on close instead of answering 503 with a body outside the envelope
    return503OnClosing: false,
    // docs/api.md R1.2: what Node's parser and Fastify's router refuse is answered with the envelope too
    clientErrorHandler: deps.answeredBeforeRouting
      ? countingClientErrors(deps.answeredBeforeRouting)
      : handleClientError,
    frameworkErrors: deps.answeredBeforeRouting
      ? countingFrameworkErrors(deps.answeredBeforeRouting)
      : handleFrameworkError,
    ajv: ajvOptions,
    // every app of the process shares the compiled schemas: a start does not compile them again
    schemaController: sharedSchemaController,
    schemaErrorFormatter: (errors) => toValidationError(errors),
  }).withTypeProvider<TypeBoxTypeProvider>()

  const methodsByPath = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return
    const methods = methodsByPath.get(route.url) ?? new Set<string>()
    for (const method of [route.method].flat()) methods.add(method)
    methodsByPath.set(route.url, methods)
  })
  app.setErrorHandler(handleError)
  if (deps.requestMetrics) app.addHook('onResponse', deps.requestMetrics.onResponse)
  addSecurityHeaders(app)
  const notFound = createNotFoundHandler(methodsByPath)
  app.setNotFoundHandler(notFound)
  acceptOnlyJsonBodies(app)
  app.addSchema(ErrorResponse)

  // production without CORS_ORIGINS allows no cross-origin call: nothing to register, no work per request
  const crossOrigin = config.http.corsOrigins === '*' || config.http.corsOrigins.length > 0
  if (crossOrigin) app.addHook('onRequest', createOptionsHook(notFound))
  if (crossOrigin) await app.register(cors, corsOptions(config))
  const limited = config.http.rateLimitPerMinute > 0
  if (limited) {
    await app.register(rateLimit, {
      global: false,
      // a shared store that fails is replaced by counters in this process: the limit never skips (R8.1)
      ...(deps.rateCounters === null
        ? {}
        : { store: rateLimitStore(deps.rateCounters, createMemoryRateCounterStore(deps.clock)) }),
      skipOnError: false,
      errorResponseBuilder: (_request, context) => new RateLimitedError(Math.ceil(context.ttl / 1000)),
    })
  }
  // API_DOCS=false (the production default): no /openapi.json, no /docs, and no document built at start
  // loaded only then: @fastify/swagger and Swagger UI cost start-up time a service without API_DOCS never needs
  if (config.http.apiDocs) {
    const { registerOpenApi } = await import('./http/openapi.js')
    await registerOpenApi(app, deps.appInfo, config.http.basePath)
  }
  // BASE_PATH (docs/api.md §1): every route below, like the API document and /docs, under one prefix
  await app.register((api) => routeTable(api, deps), { prefix: config.http.basePath })
  return app
}

/** The route table, registered under BASE_PATH. */
async function routeTable(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { config } = deps
  const limited = config.http.rateLimitPerMinute > 0
  await app.register(statusRoutes, {
    probes: deps.probes,
    healthTimeoutMs: config.http.healthTimeoutMs,
    appInfo: deps.appInfo,
    clock: deps.clock,
  })
  await app.register(siteConfigRoutes, { siteConfig: deps.siteConfig })
  // docs/api.md §4.13: the access-token keys, and where they are, for the application's other services
  await app.register(wellKnownRoutes, wellKnownDocuments(config, deps.accessTokenKeys ?? null))
  // DEMO_PAGE (on by default outside production): GET /demo, the client library's page, and the files it loads
  if (config.http.demoPage) await app.register(demoRoutes)
  // ADMIN_CONSOLE (on by default outside production): GET /admin, the admin console, and its files; public pages
  // (the admin API they call is what checks the admin)
  if (config.http.adminConsole) await app.register(adminConsoleRoutes)
  // docs/api.md §4.23: public and cacheable, so outside the credentials scope and its no-store
  await app.register(avatarImageRoutes, { avatars: deps.avatars })
  await app.register(async (credentials) => {
    // no-store on all of them; behind a proxy in production, HTTPS only (R5.7.2), checked before the guard
    const httpsOnly = config.env === 'production' && config.server.trustProxy.length > 0
    credentials.addHook('onRequest', createCredentialsHook({ httpsOnly }))
    const routeOptions = {
      accounts: deps.accounts,
      emailAccounts: deps.emailAccounts,
      rateLimit: limited ? { max: config.http.rateLimitPerMinute, timeWindow: 60_000 } : null,
      basePath: config.http.basePath,
    }
    await credentials.register(publicAuthRoutes, routeOptions)
    const mfaOptions = deps.mfa && {
      mfa: deps.mfa,
      rateLimit: routeOptions.rateLimit,
      basePath: config.http.basePath,
    }
    if (mfaOptions) await credentials.register(publicMfaRoutes, mfaOptions)
    const passkeyOptions = deps.passkeys && {
      passkeys: deps.passkeys,
      rateLimit: routeOptions.rateLimit,
      basePath: config.http.basePath,
    }
    if (passkeyOptions) await credentials.register(publicPasskeyRoutes, passkeyOptions)
    const oauthOptions = deps.providerSignIns && {
      flow: deps.providerSignIns,
      frontendOrigin: config.providers.frontendOrigin,
      basePath: config.http.basePath,
      secureCookie: config.providers.publicBaseUrl?.startsWith('https:') ?? false,
      rateLimit: routeOptions.rateLimit,
    }
    if (oauthOptions) await credentials.register(publicOAuthRoutes, oauthOptions)
    await credentials.register(async (scope) => {
      scope.addHook('onRequest', createAuthenticate(deps.tokens))
      const protectedOptions = { ...routeOptions, sessions: deps.sessions, profiles: deps.profiles }
      await scope.register(protectedAuthRoutes, protectedOptions)
      if (mfaOptions) await scope.register(protectedMfaRoutes, mfaOptions)
      // docs/api.md R5.3.1: what changes the account or its sessions needs the token's session to exist still
      await scope.register(async (changing) => {
        changing.addHook('preValidation', createLiveSessionCheck(deps.sessions))
        await changing.register(accountChangeRoutes, protectedOptions)
        if (oauthOptions) await changing.register(protectedOAuthRoutes, oauthOptions)
        if (mfaOptions) await changing.register(mfaChangeRoutes, mfaOptions)
        if (passkeyOptions) await changing.register(passkeyChangeRoutes, passkeyOptions)
        await changing.register(protectedAvatarRoutes, {
          avatars: deps.avatars,
          accounts: deps.accounts,
          basePath: config.http.basePath,
          record: deps.recordSecurityEvent,
          webhooks: deps.accountEvents ?? NO_ACCOUNT_EVENTS,
          rateLimit: routeOptions.rateLimit,
        })
      })
      // docs/api.md §4.27: every admin endpoint, reads included, checks the session and the stored role first
      await scope.register(async (admin) => {
        admin.addHook('preValidation', createAdminCheck(deps.admin.authorize))
        await admin.register(adminRoutes, {
          admin: deps.admin,
          basePath: config.http.basePath,
          rateLimit: routeOptions.rateLimit,
        })
      })
    })
  })
}

/**
 * spec 5.8 (docs/api.md R5.8): any origin, method and header outside production; in production the configured
 * origins, four methods and two headers. Either way a preflight may be cached for CORS_MAX_AGE_SECONDS, and a page
 * may read Retry-After and the rate-limit headers (R8.1).
 */
function corsOptions(config: Config) {
  const shared = {
    maxAge: CORS_MAX_AGE_SECONDS,
    exposedHeaders: ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'],
  }
  if (config.http.corsOrigins === '*') return { ...shared, origin: true, methods: ANY_METHOD }
  return {
    ...shared,
    origin: [...config.http.corsOrigins],
    methods: ['GET', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ['content-type', 'authorization'],
  }
}

/** How long a browser may reuse a preflight's answer: ten minutes, so a change of CORS_ORIGINS is soon seen. */
const CORS_MAX_AGE_SECONDS = 600
/** "Any method" of spec 5.8: every standard method (a wildcard would not hold for a request with credentials). */
const ANY_METHOD = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
