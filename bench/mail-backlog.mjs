// `node bench/mail-backlog.mjs [--dist DIR] [--codes N] [--reply-ms MS] [--ttl SECONDS] [--wait SECONDS]
// [--connections C] [--drain]`: how long a
// code asked for behind a flood of others takes to reach the mail server (issue 31, docs/api.md R6.4.2). A mail server
// on 127.0.0.1 answers each command of a message after MS ms (20); the outbox sender of DIR's build (this checkout's
// dist/ by default; another build's, to compare) runs on a fresh SQLite store while N register codes (3,000) are
// queued as fast as the store takes them, then one more. Prints when it arrived (or that it never did within the
// wait, 180 s), how many of the flood had arrived before it, and what became of the rest. C sets
// MAIL_SEND_CONNECTIONS (a build before it sends one at a time whatever it says). With --drain, it then waits (as
// long again) for the outbox to empty, and says when it did. Reports only.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Writable } from 'node:stream'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { SMTPServer } from 'smtp-server'

const { values } = parseArgs({
  options: {
    dist: { type: 'string', default: new URL('../dist', import.meta.url).pathname },
    codes: { type: 'string', default: '3000' },
    'reply-ms': { type: 'string', default: '20' },
    ttl: { type: 'string', default: '60' },
    wait: { type: 'string', default: '180' },
    connections: { type: 'string', default: '5' },
    drain: { type: 'boolean', default: false },
  },
})
const dist = resolve(values.dist)
/** @param {string} path */
const load = (path) => import(pathToFileURL(join(dist, path)).href)
const [{ loadConfig }, { systemClock }, { createLogger }, { openStores }, { openMail }] = await Promise.all([
  load('config.js'),
  load('clock.js'),
  load('logger.js'),
  load('storage/open-stores.js'),
  load('mail/open-mail.js'),
])
const codes = Number(values.codes)
const replyMs = Number(values['reply-ms'])
const ttlMs = Number(values.ttl) * 1000

// the mail server: each recipient's arrival time, by address
const arrivals = new Map()
/** @param {() => void} answer */
const later = (answer) => setTimeout(answer, replyMs)
const smtp = new SMTPServer({
  logger: false,
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  onMailFrom: (_address, _session, callback) => later(() => callback()),
  onRcptTo: (_address, _session, callback) => later(() => callback()),
  onData(stream, session, callback) {
    stream.resume()
    stream.on('end', () =>
      later(() => {
        for (const rcpt of session.envelope.rcptTo) arrivals.set(rcpt.address, performance.now())
        callback()
      }),
    )
  },
})
await new Promise((done) => smtp.listen(0, '127.0.0.1', () => done(undefined)))

const dir = await mkdtemp(join(tmpdir(), 'tessera-mail-backlog-'))
const config = loadConfig(
  {
    NODE_ENV: 'test',
    DATABASE_URL: `sqlite:${dir}/app.db`,
    DATA_DIR: dir,
    SMTP_URL: `smtp://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (smtp.server.address()).port}`,
    MAIL_FROM: 'no-reply@example.com',
    MAIL_SEND_CONNECTIONS: values.connections,
  },
  { listens: false },
)
let dropped = 0
const logger = createLogger(
  'warn',
  new Writable({
    write(chunk, _encoding, done) {
      dropped += (String(chunk).match(/"a queued mail was given up"/g) ?? []).length
      done()
    },
  }),
)
const stores = await openStores(config.storage, systemClock, logger)
const mail = await openMail({
  config,
  stores,
  clock: systemClock,
  log: logger,
  events: { record() {} },
  secret: 'mail-backlog-secret-0123456789-abcdefghijklmnopqrstuvwxyz',
  previousSecrets: [],
  observer: null,
})
/** @param {string} address */
const queue = (address) =>
  mail.mailer.queue(
    address,
    { kind: 'code', purpose: 'register', code: '123456', expiresAt: Date.now() + ttlMs },
    null,
  )

mail.sender.start()
const floodStarted = performance.now()
for (let start = 0; start < codes; start += 100) {
  await Promise.all(
    Array.from({ length: Math.min(100, codes - start) }, (_, i) => queue(`flood-${start + i}@example.com`)),
  )
}
const queuedAt = performance.now()
await queue('honest@example.com')
const deadline = queuedAt + Number(values.wait) * 1000
while (!arrivals.has('honest@example.com') && performance.now() < deadline)
  await new Promise((done) => setTimeout(done, 50))
const arrived = arrivals.get('honest@example.com')
const before = [...arrivals.values()].filter((at) => arrived === undefined || at < arrived).length

console.log(`build: ${dist}`)
console.log(
  `flood: ${codes} register codes queued in ${((queuedAt - floodStarted) / 1000).toFixed(1)} s; mail server ${replyMs} ms a reply; codes good for ${ttlMs / 1000} s; MAIL_SEND_CONNECTIONS=${values.connections}`,
)
console.log(
  arrived === undefined
    ? `the honest code: not delivered within ${values.wait} s (${arrivals.size} of the flood were)`
    : `the honest code: delivered ${((arrived - queuedAt) / 1000).toFixed(2)} s after it was queued, after ${before} of the flood`,
)
console.log(`then: ${arrivals.size} delivered in all, ${dropped} given up so far`)
if (values.drain) {
  const drainDeadline = performance.now() + Number(values.wait) * 1000
  while ((await stores.outbox.stats()).queued > 0 && performance.now() < drainDeadline)
    await new Promise((done) => setTimeout(done, 200))
  const left = (await stores.outbox.stats()).queued
  console.log(
    `drained: ${left === 0 ? 'the outbox emptied' : `${left} still queued`} ${((performance.now() - queuedAt) / 1000).toFixed(1)} s after the honest code was queued: ${arrivals.size} delivered, ${dropped} given up (expired)`,
  )
}

await mail.sender.close()
await stores.close()
await new Promise((done) => smtp.close(() => done(undefined)))
await rm(dir, { recursive: true, force: true })
