import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { Provider } from 'oidc-provider'
import { makeCertificate, type TestCertificate } from './certificates.js'

/** What a provider account says of itself: the standard claims a sign-in asks for (scopes openid, email, profile). */
export interface ProviderAccountClaims {
  sub: string
  email?: string
  email_verified?: boolean
  name?: string
  nickname?: string
  picture?: string
}

/** An OAuth error the provider answers the next authorization requests with, instead of signing anyone in. */
export interface ProviderRefusal {
  error: string
  error_description?: string
}

export interface OidcProviderOptions {
  /** A directory for the certificate (a test's temporary directory). */
  dir: string
  /** The redirect URIs of the one client (the service's `<PUBLIC_URL>/auth/oauth/<name>/callback`). */
  redirectUris: readonly string[]
  /** The certificate to serve with; a new one for localhost and 127.0.0.1 is made in `dir` by default. */
  certificate?: TestCertificate
  clientId?: string
  clientSecret?: string
  /**
   * Whether the ID token carries the scopes' claims (email, name, picture), as Google's does (true, the default);
   * false keeps them to the UserInfo endpoint, as OpenID Connect's default rule does.
   */
  claimsInIdToken?: boolean
}

export interface TestOidcProvider {
  /** `https://127.0.0.1:<port>`: what OAUTH_<NAME>_ISSUER is set to; discovery is at /.well-known/openid-configuration. */
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  /** The certificate's PEM file: what the service trusts through NODE_EXTRA_CA_CERTS. */
  readonly certFile: string
  readonly certificate: TestCertificate
  /**
   * The account the next interactions sign in (login and consent, finished at once, no form): remembered by its
   * `sub`, so that a later token or UserInfo request reads these claims. A browser that already has a session at
   * the provider (its cookies) is signed in to that session's account without any interaction.
   */
  setAccount(claims: ProviderAccountClaims): void
  /** Makes the next interactions end with this error (null: sign in again). */
  setRefusal(refusal: ProviderRefusal | null): void
  /** How many interactions the provider sent a browser to so far. */
  readonly interactions: number
  stop(): Promise<void>
}

/**
 * A real OpenID provider (oidc-provider) over HTTPS on 127.0.0.1, with one confidential client whose authorization
 * requests must use PKCE (S256). Its interactions (login, consent) are finished programmatically by a route of its
 * own server, `/interaction/<uid>`, as the account setAccount last named, so a test drives a sign-in with plain
 * redirects, or a browser that follows them.
 */
export async function startOidcProvider(options: OidcProviderOptions): Promise<TestOidcProvider> {
  const certificate = options.certificate ?? (await makeCertificate(options.dir, 'oidc-provider'))
  const clientId = options.clientId ?? 'tessera-test-client'
  const clientSecret = options.clientSecret ?? randomBytes(24).toString('hex')
  const accounts = new Map<string, ProviderAccountClaims>()
  let current: ProviderAccountClaims | null = null
  let refusal: ProviderRefusal | null = null
  let interactions = 0

  let handle: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => {
    response.statusCode = 503
    response.end()
  }
  const server: Server = createServer(
    { cert: certificate.cert, key: await readFile(certificate.keyFile) },
    (request, response) => handle(request, response),
  )
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`

  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' })
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [...options.redirectUris],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...signingKey, kid: 'test-signing-key', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'nickname', 'picture'],
    },
    conformIdTokenClaims: !(options.claimsInIdToken ?? true),
    pkce: { required: () => true },
    // lifetimes of their own, so that oidc-provider does not warn of its defaults in every test's output
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
    },
    features: { devInteractions: { enabled: false } },
    interactions: {
      url: (_context: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
    },
    async findAccount(_context: unknown, sub: string) {
      const claims = accounts.get(sub)
      if (claims === undefined) return undefined
      return { accountId: sub, claims: async () => ({ ...claims }) }
    },
  })
  // oidc-provider logs each error it answers to stderr by default; a test that provokes them wants quiet
  provider.on('server_error', () => {})
  const oidc = provider.callback()

  handle = (request, response) => {
    if (!request.url?.startsWith('/interaction/')) {
      oidc(request, response)
      return
    }
    interactions += 1
    finishInteraction(request, response).catch((error: unknown) => {
      response.statusCode = 500
      response.end(String(error))
    })
  }

  /** Signs `current` in and grants what the client asked for, or answers the refusal: no form, no consent page. */
  async function finishInteraction(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(request, response)
    if (refusal !== null) {
      await provider.interactionFinished(
        request,
        response,
        { ...refusal },
        { mergeWithLastSubmission: false },
      )
      return
    }
    if (current === null) throw new Error('no account to sign in: call setAccount first')
    const accountId = current.sub
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) })
    grant.addOIDCScope(String(details.params.scope ?? 'openid'))
    const grantId = await grant.save()
    await provider.interactionFinished(
      request,
      response,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    )
  }

  return {
    issuer,
    clientId,
    clientSecret,
    certFile: certificate.certFile,
    certificate,
    setAccount(claims) {
      accounts.set(claims.sub, { ...claims })
      current = { ...claims }
    },
    setRefusal(next) {
      refusal = next === null ? null : { ...next }
    },
    get interactions() {
      return interactions
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await closed
    },
  }
}
