import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { Clock } from '../../src/clock.js'
import { type Config, loadConfig } from '../../src/config.js'
import type { QueueSenderSettings } from '../../src/delivery/queue-sender.js'
import { createLogger } from '../../src/logger.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores } from '../../src/storage/stores.js'
import { type OpenedWebhooks, openWebhooks } from '../../src/webhooks/open-webhooks.js'
import type { WebhookObserver } from '../../src/webhooks/webhook-observer.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'

/** Two secrets of the Standard Webhooks form: the current one, and one of before a rotation. */
export const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
export const PREVIOUS_SECRET = `whsec_${Buffer.alloc(24, 3).toString('base64')}`

/** A clock that follows the real one (the receivers' verifier checks the timestamp), moved ahead when told. */
export interface AheadClock extends Clock {
  advance(ms: number): void
}

/** The webhooks as server.ts wires them, on a fresh SQLite store, with real receivers on 127.0.0.1. */
export interface WebhookHarness {
  clock: AheadClock
  stores: Stores
  config: Config
  webhooks: OpenedWebhooks
  receivers: WebhookReceiver[]
  /** The security events recorded (webhook_disabled, webhook_dropped). */
  events: SecurityEvent[]
  /** The observer's calls, by name and URL position. */
  counts: Record<keyof WebhookObserver, number[]>
  logLines: string[]
  logs(): Array<Record<string, unknown>>
  close(): Promise<void>
}

export interface WebhookHarnessOptions {
  /** How many receivers, each a URL of WEBHOOK_URLS in order; 1 by default. */
  receivers?: number
  /** Variables over the harness's own. */
  env?: Record<string, string>
  senderSettings?: Partial<QueueSenderSettings>
  /** The URL of WEBHOOK_URLS that reaches a receiver; its own by default. */
  urlOf?: (receiver: WebhookReceiver) => string
}

export async function openWebhookHarness(options: WebhookHarnessOptions = {}): Promise<WebhookHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-webhooks-'))
  const receivers: WebhookReceiver[] = []
  try {
    for (let n = 0; n < (options.receivers ?? 1); n++)
      receivers.push(await startWebhookReceiver(`/hook-${n + 1}`))
    let offset = 0
    const clock: AheadClock = {
      now: () => Date.now() + offset,
      advance(ms) {
        offset += ms
      },
    }
    const config = loadConfig(
      {
        NODE_ENV: 'test',
        DATABASE_URL: `sqlite:${dir}/app.db`,
        DATA_DIR: dir,
        WEBHOOK_URLS: receivers.map((receiver) => options.urlOf?.(receiver) ?? receiver.url).join(','),
        WEBHOOK_SECRET: SECRET,
        WEBHOOK_RETRY_SECONDS: '1',
        WEBHOOK_TIMEOUT_SECONDS: '5',
        ...options.env,
      },
      { listens: false },
    )
    const logLines: string[] = []
    const logger = createLogger(
      'info',
      new Writable({
        write(chunk, _encoding, done) {
          logLines.push(...String(chunk).split('\n').filter(Boolean))
          done()
        },
      }),
    )
    const stores = await openStores(config.storage, clock, logger)
    const counts: Record<keyof WebhookObserver, number[]> = {
      queued: [],
      delivered: [],
      failed: [],
      dropped: [],
    }
    const observer = Object.fromEntries(
      Object.keys(counts).map((name) => [
        name,
        (position: number) => {
          const list = counts[name as keyof WebhookObserver]
          list[position] = (list[position] ?? 0) + 1
        },
      ]),
    ) as unknown as WebhookObserver
    const events: SecurityEvent[] = []
    const webhooks = await openWebhooks({
      config,
      stores,
      clock,
      log: logger,
      events: { record: (event) => events.push(event) },
      observer,
      senderSettings: { pollIntervalMs: 100, ...options.senderSettings },
      random: () => 0,
    })
    return {
      clock,
      stores,
      config,
      webhooks,
      receivers,
      events,
      counts,
      logLines,
      logs: () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>),
      async close() {
        await webhooks.sender.close()
        await stores.close()
        for (const receiver of receivers) await receiver.stop()
        await rm(dir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    for (const receiver of receivers) await receiver.stop()
    await rm(dir, { recursive: true, force: true })
    throw error
  }
}
