import type { Configuration } from 'openid-client'
import type { GitHubProviderSettings } from '../config/provider-config.js'
import { PROVIDER_TIMEOUT_SECONDS, type ProviderClient, type ProviderIdentity } from './provider-client.js'

/** Read the profile, and the e-mail addresses with whether GitHub verified each (private ones included). */
const SCOPE = 'read:user user:email'

/** The largest answer of the API read: a user, or a list of e-mail addresses, is a few kilobytes. */
const MAX_API_ANSWER_BYTES = 256 * 1024

/**
 * GitHub (or a GitHub Enterprise Server): OAuth 2.0 with PKCE through openid-client, then its REST API for who signed
 * in. GitHub is no OpenID provider: there is no ID token, and the address comes from `/user/emails`, whose primary
 * entry counts as vouched for only when GitHub marked it verified. `/user`'s `email` (the public one, or null when
 * private) is never taken as verified.
 */
export function createGitHubProviderClient(settings: GitHubProviderSettings): ProviderClient {
  let configured: Promise<Configuration> | null = null
  const configuration = async (): Promise<Configuration> => {
    configured ??= import('openid-client').then((client) => {
      const config = new client.Configuration(
        {
          issuer: settings.webUrl,
          authorization_endpoint: `${settings.webUrl}/login/oauth/authorize`,
          token_endpoint: `${settings.webUrl}/login/oauth/access_token`,
        },
        settings.clientId,
        undefined,
        // GitHub takes the client's credentials in the form
        client.ClientSecretPost(settings.clientSecret),
      )
      config.timeout = PROVIDER_TIMEOUT_SECONDS
      return config
    })
    return configured
  }

  /** GET `<api><path>` with the access token, its JSON answer (bounded in size and time). */
  const api = async (path: string, accessToken: string): Promise<unknown> => {
    const response = await fetch(`${settings.apiUrl}${path}`, {
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${accessToken}`,
        'user-agent': 'Tessera',
        'x-github-api-version': '2022-11-28',
      },
      redirect: 'error',
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_SECONDS * 1000),
    })
    if (!response.ok) throw new Error(`GitHub's ${path} answered ${response.status}`)
    const declared = Number(response.headers.get('content-length') ?? 0)
    if (declared > MAX_API_ANSWER_BYTES) throw new Error(`GitHub's ${path} answered ${declared} bytes`)
    const body = await response.arrayBuffer()
    if (body.byteLength > MAX_API_ANSWER_BYTES)
      throw new Error(`GitHub's ${path} answered ${body.byteLength} bytes`)
    return JSON.parse(Buffer.from(body).toString('utf8'))
  }

  return {
    name: settings.name,

    async authorizationUrl({ redirectUri, state, codeVerifier }) {
      const client = await import('openid-client')
      return client.buildAuthorizationUrl(await configuration(), {
        redirect_uri: redirectUri,
        scope: SCOPE,
        state,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        // no account chooser by default: a browser signed in to GitHub signs in with its account
      })
    },

    async identify(callbackUrl, { state, codeVerifier }) {
      const client = await import('openid-client')
      const tokens = await client.authorizationCodeGrant(await configuration(), callbackUrl, {
        pkceCodeVerifier: codeVerifier,
        expectedState: state,
        idTokenExpected: false,
      })
      const [user, emails] = await Promise.all([
        api('/user', tokens.access_token),
        api('/user/emails', tokens.access_token),
      ])
      return identityOf(user, emails)
    },
  }
}

/** Who signed in, from `/user` and `/user/emails`. */
function identityOf(user: unknown, emails: unknown): ProviderIdentity {
  const profile = (user ?? {}) as Record<string, unknown>
  if (typeof profile.id !== 'number' || !Number.isSafeInteger(profile.id))
    throw new Error("GitHub's /user answered no numeric id")
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null)
  const entries = Array.isArray(emails) ? (emails as Array<Record<string, unknown> | null>) : []
  const primary = entries.find((entry) => entry?.primary === true && typeof entry.email === 'string')
  return {
    subject: String(profile.id),
    // the primary address, vouched for only when verified; without a primary entry, none (never /user's email)
    email: text(primary?.email),
    emailVerified: primary?.verified === true,
    name: text(profile.name) ?? text(profile.login),
    picture: text(profile.avatar_url),
  }
}
