import type { ProviderSettings } from '../config/provider-config.js'
import { createGitHubProviderClient } from './github-provider-client.js'
import { createOpenIdProviderClient } from './openid-provider-client.js'
import type { ProviderClient } from './provider-client.js'

/**
 * The client of each provider of OAUTH_PROVIDERS, by name. Nothing is fetched and openid-client is not loaded until a
 * sign-in needs it, so a service that never sees one starts as fast as one without providers.
 */
export function createProviderClients(
  enabled: readonly ProviderSettings[],
): ReadonlyMap<string, ProviderClient> {
  return new Map(
    enabled.map((settings) => [
      settings.name,
      settings.kind === 'github'
        ? createGitHubProviderClient(settings)
        : createOpenIdProviderClient(settings),
    ]),
  )
}
