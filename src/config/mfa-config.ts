import { isIPv4 } from 'node:net'
import { ConfigError } from './config-error.js'
import { type EnvReader, shownValue } from './env-reader.js'
import type { Environment } from './environment.js'

/** Second factors (docs/api.md §4.25) and passkeys (§4.26). */
export interface MfaConfig {
  /** MFA_ISSUER: the issuer an authenticator app shows beside the account (default MAIL_PRODUCT_NAME). */
  issuer: string
  /**
   * The WebAuthn relying party passkeys belong to; null when there is none to be had (production with neither
   * FRONTEND_ORIGIN nor PUBLIC_URL, or a default host that is an IP address): then passkeys are off and their routes
   * are not served (configWarnings says why).
   */
  relyingParty: RelyingParty | null
  /** Why passkeys are off, or what of the origins was left out: warnings for the log at start. */
  warnings: readonly string[]
}

/** The relying party of docs/api.md §4.26. */
export interface RelyingParty {
  /**
   * WEBAUTHN_RP_ID: a host name (never an IP address, which no browser takes), lower case; by default the host of
   * FRONTEND_ORIGIN (itself by default PUBLIC_URL's origin, or outside production `http://localhost:<PORT>`).
   */
  id: string
  /** MFA_ISSUER: the name an authenticator shows for the relying party. */
  name: string
  /** The origins an assertion may come from: FRONTEND_ORIGIN and PUBLIC_URL's origin, each the RP ID or under it. */
  origins: readonly string[]
  /**
   * Outside production with neither FRONTEND_ORIGIN nor PUBLIC_URL set: `http://localhost` and `https://localhost` on
   * any port are accepted as well, the service's own demo page wherever it listens (PORT=0 included). A browser
   * scopes a passkey of RP ID `localhost` to every port of localhost anyway.
   */
  anyLocalhostPort: boolean
}

/** What the relying party is made of beside WEBAUTHN_RP_ID: the other sections' reading of the origins. */
export interface OriginSettings {
  env: Environment
  /** MAIL_PRODUCT_NAME, MFA_ISSUER's default. */
  productName: string
  /** PUBLIC_URL as set (config/server-config.ts), null when unset. */
  publicUrl: string | null
  /** FRONTEND_ORIGIN as read by config/provider-config.ts: set, or by default the public base URL's origin. */
  frontendOrigin: string | null
  /** Whether FRONTEND_ORIGIN itself is set (rather than defaulted). */
  frontendOriginSet: boolean
}

/**
 * A host name of LDH labels, as WEBAUTHN_RP_ID must be. It has no colon, so no IPv6 literal matches it and of IP
 * addresses only IPv4 is left to refuse: isIPv4, not isIP, whose isIPv6 Node compiles at its first call (some
 * milliseconds of every development start).
 */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/

/**
 * MFA_ISSUER: one line of at most 64 characters, without a colon (the URI's label separator). WEBAUTHN_RP_ID and the
 * origins passkeys accept (docs/api.md §4.26): an RP ID that is set must cover every origin that is (FRONTEND_ORIGIN,
 * PUBLIC_URL's), else a ConfigError; a defaulted one covers FRONTEND_ORIGIN by construction, and a PUBLIC_URL on
 * another domain is left out with a warning rather than refused, so that a configuration that started before passkeys
 * existed still starts.
 */
export function readMfaConfig(read: EnvReader, settings: OriginSettings): MfaConfig {
  const issuer = read.string('MFA_ISSUER', settings.productName)
  if (issuer.length > 64 || /[\r\n:]/.test(issuer))
    throw new ConfigError('MFA_ISSUER', 'must be one line of at most 64 characters without a colon')
  const { relyingParty, warnings } = readRelyingParty(read, settings, issuer)
  return { issuer, relyingParty, warnings }
}

function readRelyingParty(
  read: EnvReader,
  settings: OriginSettings,
  name: string,
): { relyingParty: RelyingParty | null; warnings: string[] } {
  const given = read.optional('WEBAUTHN_RP_ID')
  const set = given === null ? null : given.toLowerCase()
  if (set !== null && (!HOST_NAME.test(set) || isIPv4(set)))
    throw new ConfigError(
      'WEBAUTHN_RP_ID',
      `must be a host name such as example.com (no scheme, port or IP address), got ${shownValue(given as string)}`,
    )
  const candidates: Array<{ variable: string; origin: string }> = []
  if (settings.frontendOriginSet && settings.frontendOrigin !== null)
    candidates.push({ variable: 'FRONTEND_ORIGIN', origin: settings.frontendOrigin })
  if (settings.publicUrl !== null) {
    const origin = new URL(settings.publicUrl).origin
    if (!candidates.some((candidate) => candidate.origin === origin))
      candidates.push({ variable: 'PUBLIC_URL', origin })
  }
  const local = candidates.length === 0 && settings.env !== 'production'
  if (candidates.length === 0 && !local) {
    if (set !== null)
      throw new ConfigError(
        'WEBAUTHN_RP_ID',
        'is set, but neither FRONTEND_ORIGIN nor PUBLIC_URL is: passkeys would have no origin to come from',
      )
    // no warning: a service without PUBLIC_URL seldom means to have passkeys; docs/api.md §4.26 says so
    return { relyingParty: null, warnings: [] }
  }
  const defaultHost =
    settings.frontendOrigin === null ? 'localhost' : new URL(settings.frontendOrigin).hostname
  const id = set ?? defaultHost
  if (set === null && (!HOST_NAME.test(id) || isIPv4(id)))
    return {
      relyingParty: null,
      warnings: [
        `passkeys are off: the relying party would be ${id}, an IP address, which no browser takes; set WEBAUTHN_RP_ID`,
      ],
    }
  const warnings: string[] = []
  const origins: string[] = []
  for (const { variable, origin } of candidates) {
    if (isUnder(new URL(origin).hostname, id)) {
      origins.push(origin)
      continue
    }
    if (set !== null)
      throw new ConfigError(
        'WEBAUTHN_RP_ID',
        `is ${id}, which does not cover ${variable}'s origin ${origin}: every origin must be the relying party's domain or a subdomain of it`,
      )
    warnings.push(
      `passkeys are not accepted from ${variable}'s origin ${origin}: it is not under the relying party ${id} (FRONTEND_ORIGIN's host); set WEBAUTHN_RP_ID to a domain both share`,
    )
  }
  // outside production with no origin named, the service's own pages on localhost: the RP ID must then be localhost
  if (local && id !== 'localhost')
    throw new ConfigError(
      'WEBAUTHN_RP_ID',
      `is ${id}, but neither FRONTEND_ORIGIN nor PUBLIC_URL is set: the origins would be http://localhost's, which only the RP ID localhost covers`,
    )
  return { relyingParty: { id, name, origins, anyLocalhostPort: local }, warnings }
}

/** Whether `host` is the RP ID `id` or a subdomain of it (WebAuthn's "registrable domain suffix", by labels). */
function isUnder(host: string, id: string): boolean {
  return host === id || host.endsWith(`.${id}`)
}

/** Whether an origin is `http(s)://localhost[:port]`: what `anyLocalhostPort` accepts. */
export function isLocalhostOrigin(origin: string): boolean {
  return /^https?:\/\/localhost(?::[1-9][0-9]{0,4})?$/.test(origin)
}
