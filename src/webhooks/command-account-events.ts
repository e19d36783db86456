import { type AccountEvents, createAccountEvents, NO_ACCOUNT_EVENTS } from '../auth/account-events.js'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Stores } from '../storage/stores.js'
import { createWebhookPublisher } from './webhook-publisher.js'
import { webhookTargets } from './webhook-urls.js'

/**
 * The account events of a command that changes accounts (`tessera users`: docs/api.md R6.5.9), on the stores the
 * service uses: queued in the outbox for the service's senders to deliver (a command starts none), for each URL of
 * WEBHOOK_URLS that a 410 has not disabled (read once, now). Without WEBHOOK_URLS, none, and nothing is read.
 */
export async function commandAccountEvents(
  config: Pick<Config, 'webhooks' | 'http'>,
  stores: Pick<Stores, 'outbox' | 'webhookUrls' | 'users' | 'factors'>,
  clock: Clock,
): Promise<AccountEvents> {
  const targets = webhookTargets(config.webhooks.urls)
  if (targets.length === 0) return NO_ACCOUNT_EVENTS
  const disabled = new Set((await stores.webhookUrls.disabled()).map((row) => row.urlDigest))
  const publisher = createWebhookPublisher({
    outbox: stores.outbox,
    targets,
    disabled: { has: (digest) => disabled.has(digest) },
    basePath: config.http.basePath,
    clock,
    observer: null,
    // the service's senders poll the outbox: nothing here to wake
    wake: () => {},
  })
  return createAccountEvents({ publisher, users: stores.users, factors: stores.factors })
}
