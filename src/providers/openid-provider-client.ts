import type { Configuration } from 'openid-client'
import type { OpenIdProviderSettings } from '../config/provider-config.js'
import { memoizeSuccess } from '../memoize-success.js'
import { PROVIDER_TIMEOUT_SECONDS, type ProviderClient, type ProviderIdentity } from './provider-client.js'

/** The scopes of an OpenID Connect sign-in: who (openid), the address (email), a name and a picture (profile). */
const SCOPE = 'openid email profile'

/**
 * An OpenID Connect provider (`google`, or any issuer), through openid-client: its configuration discovered from the
 * issuer on first use and kept; a discovery that fails is not kept, so the next sign-in tries again.
 */
export function createOpenIdProviderClient(settings: OpenIdProviderSettings): ProviderClient {
  const configuration = memoizeSuccess(() => discover(settings))

  return {
    name: settings.name,

    async authorizationUrl({ redirectUri, state, nonce, codeVerifier }) {
      const client = await import('openid-client')
      const config = await configuration()
      return client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: SCOPE,
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      })
    },

    async identify(callbackUrl, { state, nonce, codeVerifier }) {
      const client = await import('openid-client')
      const config = await configuration()
      // the ID token's signature, issuer, audience, expiry and nonce are openid-client's checks
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: codeVerifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      })
      const idToken = tokens.claims()
      if (idToken === undefined) throw new Error('the token answer carries no ID token')
      let claims: Record<string, unknown> = idToken
      // OpenID Connect's default keeps the scopes' claims to the UserInfo endpoint when an access token is issued
      // (Google puts them in the ID token): asked only when the ID token lacks the address, for the same subject
      if (typeof idToken.email !== 'string' && config.serverMetadata().userinfo_endpoint !== undefined) {
        const userInfo = await client.fetchUserInfo(config, tokens.access_token, idToken.sub)
        claims = { ...userInfo, ...idToken }
      }
      return identityOf(idToken.sub, claims)
    },
  }
}

async function discover(settings: OpenIdProviderSettings): Promise<Configuration> {
  const client = await import('openid-client')
  const config = await client.discovery(new URL(settings.issuer), settings.clientId, undefined, undefined, {
    timeout: PROVIDER_TIMEOUT_SECONDS,
  })
  // client_secret_basic, OpenID Connect's default, unless the provider lists client_secret_post alone
  const methods = config.serverMetadata().token_endpoint_auth_methods_supported
  const auth =
    methods !== undefined &&
    !methods.includes('client_secret_basic') &&
    methods.includes('client_secret_post')
      ? client.ClientSecretPost(settings.clientSecret)
      : client.ClientSecretBasic(settings.clientSecret)
  const configured = new client.Configuration(config.serverMetadata(), settings.clientId, undefined, auth)
  configured.timeout = PROVIDER_TIMEOUT_SECONDS
  return configured
}

/** The identity in OpenID Connect's standard claims; `email_verified` counts only when it is exactly true. */
function identityOf(subject: string, claims: Record<string, unknown>): ProviderIdentity {
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null)
  return {
    subject,
    email: text(claims.email),
    emailVerified: claims.email_verified === true,
    name: text(claims.name) ?? text(claims.nickname) ?? text(claims.preferred_username),
    picture: text(claims.picture),
  }
}
