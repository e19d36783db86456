import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores } from '../../src/storage/stores.js'
import { webhookTargets } from '../../src/webhooks/webhook-urls.js'
import { useTempDir } from '../support/temp-dir.js'
import { parsePrometheusText, sampleValue } from './prometheus-text.js'

const START = Date.parse('2026-03-01T12:00:00.000Z')
const URLS = ['https://one.example/hook', 'https://user:secret@two.example/hook?token=abc']

// docs/api.md §6.2, R6.5.6: the webhook metrics, by the URL's position in WEBHOOK_URLS, never the URL
describe('the webhook metrics', () => {
  const temp = useTempDir('webhook-metrics')
  const clock = createFixedClock(START)
  let stores: Stores

  beforeAll(async () => {
    const config = loadConfig(
      { DATABASE_URL: `sqlite:${temp.path}/app.db`, DATA_DIR: temp.path },
      { listens: false },
    )
    stores = await openStores(config.storage, clock)
  })
  afterAll(async () => {
    await stores.close()
  })

  it('count what each URL got, every position from zero, and read what waits for each at every scrape', async () => {
    const metrics = createMetrics()
    const scrape = async () => parsePrometheusText(await metrics.registry.metrics())
    const targets = webhookTargets(URLS)
    metrics.webhooks.watch(stores.outbox, targets, clock)
    const { webhooks } = metrics
    webhooks.queued(1)
    webhooks.queued(1)
    webhooks.queued(2)
    webhooks.delivered(1)
    webhooks.failed(2)
    webhooks.failed(2)
    webhooks.dropped(2)
    await stores.outbox.enqueueAll(
      [START - 90_000, START - 30_000, START - 10_000].map((createdAt, n) => ({
        id: String(n + 1).repeat(32),
        lane: 'webhook' as const,
        userId: null,
        recipient: (n === 2 ? targets[0] : targets[1])?.digest as string,
        payload: '{}',
        createdAt,
        codeExpiresAt: null,
      })),
    )
    const text = await metrics.registry.metrics()
    for (const url of URLS) expect(text).not.toContain(url)
    expect(text).not.toContain('secret')
    const samples = await scrape()
    const expected = {
      tessera_webhook_queued_total: [2, 1],
      tessera_webhook_delivered_total: [1, 0],
      tessera_webhook_failed_total: [0, 2],
      tessera_webhook_dropped_total: [0, 1],
      tessera_webhook_queued_messages: [1, 2],
      tessera_webhook_oldest_queued_age_seconds: [10, 90],
    }
    for (const [name, values] of Object.entries(expected))
      for (const [index, value] of values.entries())
        expect(sampleValue(samples, name, { url: String(index + 1) }), `${name} ${index + 1}`).toBe(value)
    // the mail gauges count the mail lane only
    metrics.mail.watch(stores.outbox, clock)
    expect(sampleValue(await scrape(), 'tessera_mail_queued_messages')).toBe(0)
  })
})
