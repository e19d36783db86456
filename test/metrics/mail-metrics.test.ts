import { AggregatorRegistry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { CODE_PURPOSES } from '../../src/code-purpose.js'
import { loadConfig } from '../../src/config.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores } from '../../src/storage/stores.js'
import { useTempDir } from '../support/temp-dir.js'
import { parsePrometheusText, sampleValue } from './prometheus-text.js'

const START = Date.parse('2026-03-01T12:00:00.000Z')

describe('the mail metrics', () => {
  const temp = useTempDir('mail-metrics')
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

  it('count what the mail domain reports, and the codes sent and refused by purpose, each purpose from zero', async () => {
    const metrics = createMetrics()
    const { mail } = metrics
    mail.queued()
    mail.queued()
    mail.sent()
    mail.failed()
    mail.dropped()
    mail.skipped()
    mail.codeSent('login')
    mail.codeSent('login')
    mail.codeRefused('reset_password')
    const samples = parsePrometheusText(await metrics.registry.metrics())
    expect(sampleValue(samples, 'tessera_mail_queued_total')).toBe(2)
    for (const name of ['sent', 'failed', 'dropped', 'skipped'])
      expect(sampleValue(samples, `tessera_mail_${name}_total`), name).toBe(1)
    for (const purpose of CODE_PURPOSES) {
      expect(sampleValue(samples, 'tessera_email_codes_sent_total', { purpose })).toBe(
        purpose === 'login' ? 2 : 0,
      )
      expect(sampleValue(samples, 'tessera_email_code_tries_failed_total', { purpose })).toBe(
        purpose === 'reset_password' ? 1 : 0,
      )
    }
  })

  it('read the outbox at each scrape: how many wait, and for how long the oldest has', async () => {
    const metrics = createMetrics()
    const scrape = async () => parsePrometheusText(await metrics.registry.metrics())
    // not watched yet: zero
    expect(sampleValue(await scrape(), 'tessera_mail_queued_messages')).toBe(0)
    metrics.mail.watch(stores.outbox, clock)
    expect(sampleValue(await scrape(), 'tessera_mail_queued_messages')).toBe(0)
    expect(sampleValue(await scrape(), 'tessera_mail_oldest_queued_age_seconds')).toBe(0)
    for (const [n, at] of [START - 90_000, START - 30_000].entries())
      await stores.outbox.enqueue({
        id: String(n).repeat(32),
        lane: 'mail',
        userId: null,
        recipient: 'a@example.com',
        payload: 'v1.x',
        createdAt: at,
        codeExpiresAt: null,
      })
    const samples = await scrape()
    expect(sampleValue(samples, 'tessera_mail_queued_messages')).toBe(2)
    expect(sampleValue(samples, 'tessera_mail_oldest_queued_age_seconds')).toBe(90)
    clock.advance(10_000)
    expect(sampleValue(await scrape(), 'tessera_mail_oldest_queued_age_seconds')).toBe(100)
  })

  it('are not multiplied by the workers of WORKERS > 1: the outbox gauges take the largest, the counters add up', async () => {
    const workers = [createMetrics(), createMetrics()]
    for (const worker of workers) {
      worker.mail.watch(stores.outbox, clock)
      worker.mail.sent()
    }
    const aggregated = AggregatorRegistry.aggregate(
      await Promise.all(workers.map((worker) => worker.registry.getMetricsAsJSON())),
    )
    const samples = parsePrometheusText(await aggregated.metrics())
    const queued = (await stores.outbox.stats('mail')).queued
    expect(queued).toBeGreaterThan(0)
    expect(sampleValue(samples, 'tessera_mail_queued_messages')).toBe(queued)
    expect(sampleValue(samples, 'tessera_mail_sent_total')).toBe(2)
  })

  it('keep their last value when the outbox does not answer', async () => {
    const metrics = createMetrics()
    let failing = false
    metrics.mail.watch(
      {
        stats: async () => {
          if (failing) throw new Error('the database is down')
          return stores.outbox.stats('mail')
        },
      },
      clock,
    )
    const before = sampleValue(
      parsePrometheusText(await metrics.registry.metrics()),
      'tessera_mail_queued_messages',
    )
    failing = true
    const after = sampleValue(
      parsePrometheusText(await metrics.registry.metrics()),
      'tessera_mail_queued_messages',
    )
    expect(after).toBe(before)
  })
})
