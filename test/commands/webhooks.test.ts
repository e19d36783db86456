import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { WEBHOOKS_USAGE } from '../../src/commands/webhooks.js'
import { loadConfig } from '../../src/config.js'
import { openStores } from '../../src/storage/open-stores.js'
import { urlDigest } from '../../src/webhooks/webhook-urls.js'
import { runCli } from '../support/process.js'
import { useTempDir } from '../support/temp-dir.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'
import { SECRET } from '../webhooks/webhook-harness.js'

// docs/api.md R6.5.7: `tessera webhooks list|test|enable`, each URL named by its position, never shown.

describe('tessera webhooks', () => {
  const temp = useTempDir('webhooks-command')
  const receivers: WebhookReceiver[] = []
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()))
  })
  let serial = 0
  /** Two receivers, and the variables of a store of its own that names them, the second with credentials. */
  const setUp = async () => {
    for (let n = 0; n < 2; n++) receivers.push(await startWebhookReceiver())
    const [one, two] = receivers as [WebhookReceiver, WebhookReceiver]
    const urls = [one.url, two.url.replace('http://', 'http://ops:pa55word@')]
    const dir = join(temp.path, `run-${serial++}`)
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${join(dir, 'app.db')}`,
      WEBHOOK_URLS: urls.join(','),
      WEBHOOK_SECRET: SECRET,
    }
    expect((await runCli(['migrate'], env)).code).toBe(0)
    return { one, two, urls, env }
  }
  const neverShown = (output: string, urls: readonly string[]) => {
    for (const url of urls) expect(output).not.toContain(url)
    expect(output).not.toContain('pa55word')
  }

  it('test posts a signed ping to each URL and prints what each answered; 1 unless every one answered 2xx', async () => {
    const { one, two, urls, env } = await setUp()
    two.answer(503)
    const run = await runCli(['webhooks', 'test'], env)
    expect(run).toMatchObject({
      code: 1,
      stdout: '1  delivered: HTTP 204\n2  failed: HTTP 503\n',
      stderr: 'tessera webhooks: 1 of the URLs did not answer 2xx\n',
    })
    const [ping] = one.received
    const body = new Webhook(SECRET).verify(ping?.body ?? '', {
      'webhook-id': String(ping?.headers['webhook-id']),
      'webhook-timestamp': String(ping?.headers['webhook-timestamp']),
      'webhook-signature': String(ping?.headers['webhook-signature']),
    })
    expect(body).toEqual({ type: 'ping', timestamp: expect.any(String), data: {} })
    expect(two.received[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from('ops:pa55word').toString('base64')}`,
    )
    neverShown(run.stdout + run.stderr, urls)

    two.answer(200)
    expect(await runCli(['webhooks', 'test'], env)).toMatchObject({
      code: 0,
      stdout: '1  delivered: HTTP 204\n2  delivered: HTTP 200\n',
      stderr: '',
    })
  })

  it('list shows each URL by position, disabled or not, with what waits for it; enable enables one by URL or position', async () => {
    const { urls, env } = await setUp()
    const now = Date.now()
    const stores = await openStores(loadConfig(env).storage, systemClock)
    try {
      await stores.webhookUrls.disable(urlDigest(urls[1] as string), Date.parse('2026-03-01T12:00:00.000Z'))
      await stores.outbox.enqueueAll(
        [now - 65_000, now - 5_000].map((createdAt, n) => ({
          id: String(n + 1).repeat(32),
          lane: 'webhook' as const,
          userId: null,
          recipient: urlDigest(urls[0] as string),
          payload: '{}',
          createdAt,
          codeExpiresAt: null,
        })),
      )
    } finally {
      await stores.close()
    }
    const list = await runCli(['webhooks', 'list'], env)
    expect(list.code).toBe(0)
    expect(list.stdout).toMatch(
      /^1 {2}enabled {2}2 waiting, the oldest for (6[5-9]|[7-9]\d) s\n2 {2}disabled since 2026-03-01T12:00:00\.000Z \(410\) {2}no event waiting\n$/,
    )
    neverShown(list.stdout, urls)

    expect(await runCli(['webhooks', 'enable', '2'], env)).toMatchObject({
      code: 0,
      stdout: 'URL 2 enabled: events are queued for it again\n',
    })
    expect(await runCli(['webhooks', 'enable', urls[1] as string], env)).toMatchObject({
      code: 0,
      stdout: 'URL 2 was not disabled\n',
    })
    expect((await runCli(['webhooks', 'list'], env)).stdout).toContain('2  enabled  no event waiting\n')
    const unknown = await runCli(['webhooks', 'enable', 'https://user:secret@elsewhere.example/hook'], env)
    expect(unknown).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'tessera webhooks: that URL is not in WEBHOOK_URLS (give it, or its position)\n',
    })
    expect(await runCli(['webhooks', 'enable', '3'], env)).toMatchObject({ code: 1 })
  })

  it('refuses to run without WEBHOOK_URLS, and a bad command line with its usage', async () => {
    const { env } = await setUp()
    expect(await runCli(['webhooks', 'list'], { ...env, WEBHOOK_URLS: '' })).toMatchObject({
      code: 1,
      stderr: 'tessera webhooks: WEBHOOK_URLS is not set: the service sends no webhooks\n',
    })
    expect(await runCli(['webhooks', 'enable'], env)).toMatchObject({
      code: 2,
      stderr: `tessera webhooks: webhooks enable needs the URL, or its position\n${WEBHOOKS_USAGE}`,
    })
    expect(await runCli(['webhooks', 'list', 'https://user:secret@x.example/'], env)).toMatchObject({
      code: 2,
      stderr: `tessera webhooks: webhooks list takes no argument\n${WEBHOOKS_USAGE}`,
    })
    expect(await runCli(['webhooks', '--help'], env)).toMatchObject({ code: 0, stdout: WEBHOOKS_USAGE })
  })
})
