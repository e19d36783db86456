import { join } from 'node:path'
import { makeCertificate, type TestCertificate } from './certificates.js'
import { type OidcProviderOptions, startOidcProvider, type TestOidcProvider } from './oidc-provider.js'
import { type RunningService, startProcess } from './process.js'
import { freePort } from './redis-server.js'

/** Variables of the service's environment; an undefined one is left unset. */
type ServiceEnv = Record<string, string | undefined>

/** A sign-in provider of the test, started, and the variables that point the service at it. */
export interface StartedProvider<P> {
  provider: P
  env: ServiceEnv
}

/** `tessera serve` as a child process, with the provider of the test that it signs in at. */
export interface ServiceWithProvider<P> extends RunningService {
  readonly provider: P
  /** `http://127.0.0.1:<port>`: the service's PUBLIC_URL, and so the origin of its callback URLs and pages. */
  readonly origin: string
  /** The provider's self-signed certificate, for a TestBrowser to trust (the service trusts it already). */
  readonly ca: Buffer
  /** The service's SQLite database, for a CLI command run against it. */
  readonly databaseUrl: string
  /** Stops the service, then the provider; resolves with the service's exit code. */
  stop(): Promise<number | null>
}

/**
 * The service as a child process (the built `tessera`), signing in at a provider of the test served over HTTPS with a
 * certificate made in `dir`, which the service trusts through NODE_EXTRA_CA_CERTS. The service's port is chosen
 * before either starts: `startProvider` gets its origin, to register the service's callback URL. The service keeps its
 * SQLite database and its files in `dir`; `env` adds to its environment, or overrides it.
 */
export async function startServiceWithProvider<P extends { stop(): Promise<void> }>(
  dir: string,
  startProvider: (certificate: TestCertificate, origin: string) => Promise<StartedProvider<P>>,
  env: ServiceEnv = {},
): Promise<ServiceWithProvider<P>> {
  const certificate = await makeCertificate(dir, 'provider')
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const { provider, env: providerEnv } = await startProvider(certificate, origin)
  const databaseUrl = `sqlite:${join(dir, 'tessera.db')}`
  let service: RunningService
  try {
    service = await startProcess({
      PORT: String(port),
      PUBLIC_URL: origin,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dir,
      ...providerEnv,
      NODE_EXTRA_CA_CERTS: certificate.certFile,
      ...env,
    })
  } catch (error) {
    // a suite's afterAll sees no service to stop: the provider would be left listening
    await provider.stop()
    throw error
  }
  return {
    ...service,
    provider,
    origin,
    ca: certificate.cert,
    databaseUrl,
    async stop() {
      const code = await service.stop()
      await provider.stop()
      return code
    },
  }
}

/**
 * The service with its `google` preset pointed at a real OpenID provider (oidc-provider), whose one client is
 * registered with the service's callback URL; `options` go to startOidcProvider.
 */
export function startServiceWithOidcProvider(
  dir: string,
  env: ServiceEnv = {},
  options: Pick<OidcProviderOptions, 'claimsInIdToken'> = {},
): Promise<ServiceWithProvider<TestOidcProvider>> {
  return startServiceWithProvider(
    dir,
    async (certificate, origin) => {
      const provider = await startOidcProvider({
        dir,
        certificate,
        redirectUris: [`${origin}/auth/oauth/google/callback`],
        ...options,
      })
      return {
        provider,
        env: {
          OAUTH_PROVIDERS: 'google',
          OAUTH_GOOGLE_ISSUER: provider.issuer,
          OAUTH_GOOGLE_CLIENT_ID: provider.clientId,
          OAUTH_GOOGLE_CLIENT_SECRET: provider.clientSecret,
        },
      }
    },
    env,
  )
}
