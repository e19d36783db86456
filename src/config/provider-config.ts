import { ConfigError } from './config-error.js'
import { type EnvReader, shownValue } from './env-reader.js'
import type { Environment } from './environment.js'

/** A provider of OpenID Connect, found by discovery from its issuer (`google`, or any other name). */
export interface OpenIdProviderSettings {
  kind: 'openid'
  /** The name in OAUTH_PROVIDERS: the URL segment of /auth/oauth/<name>/… and the provider of a link. */
  name: string
  /** OAUTH_<NAME>_ISSUER: https://accounts.google.com for google. */
  issuer: string
  clientId: string
  clientSecret: string
}

/** GitHub, or a GitHub Enterprise Server: OAuth 2.0 and its REST API (no OpenID Connect). */
export interface GitHubProviderSettings {
  kind: 'github'
  name: 'github'
  /** OAUTH_GITHUB_URL: where /login/oauth/authorize and /login/oauth/access_token are (https://github.com). */
  webUrl: string
  /** OAUTH_GITHUB_API_URL: where /user and /user/emails are (https://api.github.com; `<URL>/api/v3` for a server). */
  apiUrl: string
  clientId: string
  clientSecret: string
}

export type ProviderSettings = OpenIdProviderSettings | GitHubProviderSettings

/** Sign-in with providers (docs/api.md §4.24). */
export interface ProviderConfig {
  /** OAUTH_PROVIDERS, each with its settings, in the order listed; empty when unset. */
  enabled: readonly ProviderSettings[]
  /**
   * FRONTEND_ORIGIN: the origin the callback page posts its result to, and the only one `redirect_to` may name; by
   * default the origin of the public base URL. Null when there is no public base URL (production without
   * PUBLIC_URL, which is refused when a provider is enabled).
   */
  frontendOrigin: string | null
  /**
   * The service's public base URL, BASE_PATH included (PUBLIC_URL, or outside production its default): the
   * redirect URIs are `<publicBaseUrl>/auth/oauth/<name>/callback`. Null as frontendOrigin is.
   */
  publicBaseUrl: string | null
}

/** A provider's name: what OAUTH_PROVIDERS lists and /auth/oauth/<name>/… names. */
export const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,31}$/

/** Names that are segments of /auth/oauth/… routes of their own, so no provider may have them. */
const RESERVED_NAMES = ['exchange', 'providers']

const GOOGLE_ISSUER = 'https://accounts.google.com'
const GITHUB_URL = 'https://github.com'
const GITHUB_API_URL = 'https://api.github.com'

/**
 * OAUTH_PROVIDERS and, for each name, OAUTH_<NAME>_CLIENT_ID, OAUTH_<NAME>_CLIENT_SECRET and OAUTH_<NAME>_ISSUER
 * (`github`: OAUTH_GITHUB_URL, OAUTH_GITHUB_API_URL instead), where <NAME> is the name in upper case with `-` as
 * `_`; FRONTEND_ORIGIN. `publicBaseUrl` is the service's (config/server-config.ts publicBaseUrl).
 */
export function readProviderConfig(
  read: EnvReader,
  context: { env: Environment; publicBaseUrl: string | null },
): ProviderConfig {
  const names = read.listOf(
    'OAUTH_PROVIDERS',
    'provider names (a-z, 0-9, _ and -, starting with a letter)',
    (name) => PROVIDER_NAME.test(name),
  )
  const prefixes = new Map<string, string>()
  for (const name of names) {
    if (RESERVED_NAMES.includes(name))
      throw new ConfigError(
        'OAUTH_PROVIDERS',
        `must not list ${shownValue(name)}: a route of its own has that name`,
      )
    const prefix = variablePrefix(name)
    const other = prefixes.get(prefix)
    if (other !== undefined)
      throw new ConfigError(
        'OAUTH_PROVIDERS',
        other === name
          ? `lists ${shownValue(name)} twice`
          : `lists ${shownValue(other)} and ${shownValue(name)}, whose variables are both ${prefix}_*`,
      )
    prefixes.set(prefix, name)
  }
  const enabled = names.map((name) => readProvider(read, name))
  const frontendOrigin = readFrontendOrigin(read, context.publicBaseUrl)
  if (enabled.length > 0 && context.publicBaseUrl === null)
    throw new ConfigError(
      'PUBLIC_URL',
      'must be set in production with OAUTH_PROVIDERS: the redirect URIs the providers return to are made from it',
    )
  return { enabled, frontendOrigin, publicBaseUrl: context.publicBaseUrl }
}

/** OAUTH_<NAME>: the name in upper case, `-` as `_`. */
function variablePrefix(name: string): string {
  return `OAUTH_${name.toUpperCase().replaceAll('-', '_')}`
}

function readProvider(read: EnvReader, name: string): ProviderSettings {
  const prefix = variablePrefix(name)
  const required = (suffix: string) => {
    const value = read.optional(`${prefix}_${suffix}`)
    if (value === null)
      throw new ConfigError(`${prefix}_${suffix}`, `must be set: OAUTH_PROVIDERS lists ${name}`)
    return value
  }
  const clientId = required('CLIENT_ID')
  const clientSecret = required('CLIENT_SECRET')
  if (name === 'github') {
    const webUrl = httpsBase(read, 'OAUTH_GITHUB_URL') ?? GITHUB_URL
    // a GitHub Enterprise Server serves its API under /api/v3 of its own address
    const apiUrl =
      httpsBase(read, 'OAUTH_GITHUB_API_URL') ?? (webUrl === GITHUB_URL ? GITHUB_API_URL : `${webUrl}/api/v3`)
    return { kind: 'github', name, webUrl, apiUrl, clientId, clientSecret }
  }
  const issuer = httpsBase(read, `${prefix}_ISSUER`) ?? (name === 'google' ? GOOGLE_ISSUER : null)
  if (issuer === null)
    throw new ConfigError(
      `${prefix}_ISSUER`,
      `must be set: OAUTH_PROVIDERS lists ${name}, which is not google or github`,
    )
  return { kind: 'openid', name, issuer, clientId, clientSecret }
}

/**
 * An https URL without credentials, query or fragment, its trailing slashes dropped; null when unset. A provider is
 * only ever reached over HTTPS: the tokens and the identity it answers are what the sign-in trusts.
 */
function httpsBase(read: EnvReader, name: string): string | null {
  const value = read.url(name, ['https:'])
  if (value === null) return null
  const url = new URL(value)
  if (url.username !== '' || url.password !== '' || /[?#]/.test(value))
    throw new ConfigError(name, 'must be an https URL without credentials, query or fragment')
  return url.href.replace(/\/+$/, '')
}

/** FRONTEND_ORIGIN: `scheme://host[:port]` and nothing else; by default the public base URL's origin. */
function readFrontendOrigin(read: EnvReader, publicBaseUrl: string | null): string | null {
  const value = read.optional('FRONTEND_ORIGIN')
  if (value === null) return publicBaseUrl === null ? null : new URL(publicBaseUrl).origin
  const url = URL.canParse(value) ? new URL(value) : null
  // the origin a browser reports (lower case, no default port) is what postMessage compares: a path, even a
  // trailing slash, would be a mistake the operator should hear of now
  const bare =
    url !== null &&
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.username === '' &&
    url.password === '' &&
    url.pathname === '/' &&
    !/[/?#]/.test(value.slice(url.protocol.length + 2))
  if (url === null || !bare)
    throw new ConfigError(
      'FRONTEND_ORIGIN',
      `must be an origin such as https://app.example.com (scheme, host and port only), got ${shownValue(value)}`,
    )
  return url.origin
}
