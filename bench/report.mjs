// What a run writes: its report as JSON and Markdown under bench/results/ (not committed), and for a full run the
// page docs/performance.md would be with this run, written to bench/results/latest.md or, with --write-docs, over
// docs/performance.md itself. The page's notes section is taken from docs/performance.md, so it is kept from one
// run to the next.
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PROBE_TIMEOUT_MS } from './postgres.mjs'
import { START_NODE_FLAGS } from './service-process.mjs'
import { DEFAULT_POSTGRES_URL, DEFAULT_REDIS_URL, readSettings } from './settings.mjs'
import { COLD_START_RATIO } from './startup-figures.mjs'
import { describeMiss, markdownTable, missedTargets } from './table.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url))
const LATEST_PAGE = `${RESULTS_DIR}latest.md`
const PERFORMANCE_DOC = fileURLToPath(new URL('../docs/performance.md', import.meta.url))
const NOTES_START = '<!-- notes:start -->'
const NOTES_END = '<!-- notes:end -->'

/**
 * @typedef {object} RunReport
 * @property {string} startedAt ISO 8601
 * @property {number} durationSeconds
 * @property {boolean} quick
 * @property {boolean} [startupOnly] whether the run measured the cold starts alone (--startup-only)
 * @property {ReturnType<typeof import('./machine.mjs').describeMachine>} machine
 * @property {Configuration} configuration
 * @property {import('./rows.mjs').Row[]} rows
 * @property {boolean} complete false when the run failed part-way
 * @property {string[]} skipped
 */

/** @typedef {ReturnType<typeof describeConfiguration>} Configuration */

/**
 * The run's parameters and tool versions, saved in its JSON report and written out on the performance page.
 * @param {import('./settings.mjs').Settings} settings
 */
export function describeConfiguration(settings) {
  const require = createRequire(import.meta.url)
  /** @param {string} name */
  const versionOf = (name) =>
    String(/** @type {{ version?: unknown }} */ (require(`${name}/package.json`)).version)
  return {
    pairs: settings.pairs,
    startupPairs: settings.startupPairs,
    httpSeconds: settings.httpSeconds,
    argon2Seconds: settings.argon2Seconds,
    warmupSeconds: settings.warmupSeconds,
    httpConnections: settings.httpConnections,
    argon2Connections: settings.argon2Connections,
    mixedMeConnections: settings.mixedMeConnections,
    floodSeconds: settings.floodSeconds,
    quickFloodSeconds: readSettings(['--quick'], {}).floodSeconds,
    baselineUsers: settings.baselineUsers.toLocaleString('en-US'),
    scaledUsers: settings.scaledUsers.toLocaleString('en-US'),
    quickScaledUsers: readSettings(['--quick'], {}).scaledUsers.toLocaleString('en-US'),
    quickStartupPairs: readSettings(['--quick'], {}).startupPairs,
    sqliteSessions: true,
    quickPostgresFigures: readSettings(['--quick'], {}).figures.postgres,
    argon2MemoryKiB: settings.argon2.memoryKiB,
    argon2TimeCost: settings.argon2.timeCost,
    argon2Parallelism: settings.argon2.parallelism,
    hashConcurrency: settings.hashConcurrency,
    hashQueueLimit: settings.hashQueueLimit,
    nodeFlags: START_NODE_FLAGS.join(' '),
    fastifyVersion: versionOf('fastify'),
    autocannonVersion: versionOf('autocannon'),
  }
}

/**
 * Writes bench/results/<timestamp>.json and .md; returns their paths, relative to the repository.
 * @param {RunReport} report
 */
export async function writeResults(report) {
  await mkdir(RESULTS_DIR, { recursive: true })
  const stem = report.startedAt.replace(/[:.]/g, '-')
  const json = `${RESULTS_DIR}${stem}.json`
  const markdown = `${RESULTS_DIR}${stem}.md`
  await writeFile(json, `${JSON.stringify(report, null, 2)}\n`)
  await writeFile(markdown, `${resultsMarkdown(report)}\n`)
  return { json: relative(ROOT, json), markdown: relative(ROOT, markdown) }
}

/**
 * Writes the performance page with this run, its notes section taken from docs/performance.md: over
 * docs/performance.md itself when `overDocs` (--write-docs), else to bench/results/latest.md, which is not
 * committed. Returns the path written, relative to the repository.
 * @param {RunReport} report
 * @param {{ overDocs: boolean }} options
 */
export async function writePerformancePage(report, options) {
  let notes = `${NOTES_START}\n${NOTES_END}`
  if (existsSync(PERFORMANCE_DOC)) {
    const current = await readFile(PERFORMANCE_DOC, 'utf8')
    const start = current.indexOf(NOTES_START)
    const end = current.indexOf(NOTES_END)
    if (start !== -1 && end > start) notes = current.slice(start, end + NOTES_END.length)
  }
  const path = options.overDocs ? PERFORMANCE_DOC : LATEST_PAGE
  await mkdir(RESULTS_DIR, { recursive: true })
  await writeFile(path, `${performancePage(report, notes)}\n`)
  return relative(ROOT, path)
}

/** @param {RunReport} report */
function resultsMarkdown(report) {
  return [
    `# Tessera benchmark, ${report.startedAt}${report.quick ? ' (--quick)' : ''}${report.startupOnly ? ' (--startup-only)' : ''}`,
    '',
    machineLine(report),
    '',
    markdownTable(report.rows),
    '',
    verdict(report),
  ].join('\n')
}

/**
 * @param {RunReport} report
 * @param {string} notes
 */
function performancePage(report, notes) {
  const config = report.configuration
  const m = report.machine
  const concurrency =
    config.hashConcurrency === m.cores
      ? `\`AUTH_HASH_CONCURRENCY=${config.hashConcurrency}\` (the default: the core count)`
      : `\`AUTH_HASH_CONCURRENCY=${config.hashConcurrency}\``
  const sqliteTokens = config.sqliteSessions
    ? ' On SQLite every seeded account also has a session, as a login in the default mode stores it, so that table has the size it would have with every account logged in; with Redis, sessions are not seeded.'
    : ''
  const quickPostgresSettings = config.quickPostgresFigures.includes('eddsa')
    ? ''
    : ` (\`--quick\` measures \`AUTH_JWT_ALGORITHM=EdDSA\` on the embedded default only: it changes the signing, which costs the same whatever the store)`
  return `# Performance

Argon2 is the only thing allowed to be slow, and it must not starve anything else. \`npm run bench\` measures each
figure of the service right next to the limit of the same machine that bounds it, in the same run: limit (A) and
figure (B) alternate, A B A B, ${config.pairs} pairs, and the table gives the median of the pairs' ratios (each pair's
ratio in brackets), because the shared machines this runs on drift by ±30 % within minutes.

This page is rewritten, except the notes section at the end, by a full run with \`--write-docs\`
(\`npm run bench -- --write-docs\`); a full run without it writes the page it would make to
\`bench/results/latest.md\` instead, and leaves this one as it is.

## Latest run

${report.startedAt}, ${Math.round(report.durationSeconds)} s.

${markdownTable(report.rows)}

${verdict(report)}

## The machine

- CPU: ${m.cpu}, ${m.cores} cores
- Memory: ${m.memoryGiB} GiB
- Node.js ${m.node}
- OS: ${m.os}
- Load average when the run started: ${m.loadAverageAtStart.join(', ')} (the machine is shared; other work ran beside the benchmark)

## What is measured

- **The service** runs as its own process, as \`npm start\` runs it (\`node ${config.nodeFlags ? `${config.nodeFlags} ` : ''}bin/tessera.js serve\`, \`WORKERS=1\`), with \`NODE_ENV=production\`, real Argon2id parameters (m=${config.argon2MemoryKiB} KiB, t=${config.argon2TimeCost}, p=${config.argon2Parallelism}), ${concurrency}, \`RATE_LIMIT_PER_MINUTE=0\` (rate limiting off) and \`LOG_LEVEL=warn\`, so that the one log line per request (level info) is not written and logging does not dominate the HTTP figures. Metrics are on (\`METRICS_PORT\` on a free port; the bench checks that \`GET /metrics\` answers before using the service) and so is the audit trail (the default \`AUDIT_RETENTION_DAYS\`: every registration, login, refresh and logout appends its event), as a monitored production deployment runs.
- **Backends**: the embedded default (SQLite in WAL mode with \`synchronous=FULL\`, in a fresh \`DATA_DIR\`) and PostgreSQL with sessions in Redis (a fresh database and a unique \`REDIS_KEY_PREFIX\` per run, removed afterwards) where they answer: at \`BENCH_POSTGRES_URL\` and \`BENCH_REDIS_URL\`, else at \`TEST_POSTGRES_URL\` and \`TEST_REDIS_URL\`, else at the tests' defaults (\`${DEFAULT_POSTGRES_URL}\` and \`${DEFAULT_REDIS_URL}\`, [development](development.md)). Each is asked one query, within ${PROBE_TIMEOUT_MS / 1000} s, before anything is measured; when either does not answer, or with \`--skip-postgres\`, the PostgreSQL + Redis run is skipped and the output says why.
- **Load**: autocannon ${config.autocannonVersion}, programmatic, each load in its own process. ${config.httpConnections} connections for \`GET /health\`, \`GET /auth/me\` (a pool of valid access tokens, one per connection) and \`POST /auth/refresh\` (one chain per connection over a pool of accounts: each request sends the refresh token its connection's previous response returned). ${config.argon2Connections} connections for \`POST /auth/login\` (one account) and \`POST /auth/register\` (distinct e-mails): enough to keep every Argon2 slot busy. The mixed run loads logins (${config.argon2Connections} connections) and \`GET /auth/me\` (${config.mixedMeConnections} connections) at the same time, from two processes. Phases last ${config.httpSeconds} s (HTTP-bound figures) and ${config.argon2Seconds} s (Argon2-bound figures), after a warm-up of each endpoint.
- **Limits**: the HTTP ceiling is a bare Fastify ${config.fastifyVersion} server in its own process answering \`GET /health\` with \`{"status":"ok"}\` (logger off), loaded exactly like the service; for \`GET /auth/me\` over HTTPS (embedded store only) the same server with the service's self-signed certificate (P-256), serving HTTPS as the service does (HTTP/2, and HTTP/1.1 to clients that do not offer it, as autocannon does not), against the service started with \`TLS_CERT_FILE\` on the same store. The Argon2 ceiling is raw @node-rs/argon2 hash or verify at the same parameters and concurrency, in its own process, for as long as the phase it bounds: one thread per computation calling the synchronous function back to back, the fastest way the library runs here (faster than its async calls on the libuv pool, and the way the service runs it). The login floor (embedded run only, no target) is a bare Fastify server in its own process whose \`POST /auth/login\` does nothing but the hash: it reads the JSON body, verifies the password on the service's own Argon2 threads (\`AUTH_HASH_CONCURRENCY\` of them, the same parameters) and answers a body the size of a token pair; loaded like the service's login and alternated with the same raw Argon2 ceiling, it shows how near that ceiling a login server can come on the machine, and so how much of the gap to it is the service's own work. The register floor (embedded run only, no target) is the same server's \`POST /auth/register\`: it hashes the body's password on the same threads with the same parameters and answers that body with 201, alternated with the raw Argon2 hash ceiling beside the service's register. The refresh floor (no target) is a bare Fastify server in its own process whose \`POST /auth/refresh\` does only what a rotation must: it validates the body with the route's schema, verifies the HS256 refresh token with fast-jwt, signs a new access and refresh token with the service's own signer, stores the rotation single-use (the stored SHA-256 of the old token replaced by the new one's only if it is still the old one: on the embedded run one \`UPDATE … WHERE\` through the service's own SQLite writer thread, committed with \`synchronous=FULL\` in a file of its own; on PostgreSQL + Redis one compare-and-set script in Redis, where the service keeps sessions, through ioredis with auto-pipelining) and answers the pair in the service's envelope; its refresh chains are started by a \`POST /auth/login\` of its own without a password. Loaded like the service's refresh and alternated with the same bare Fastify ceiling, it shows how near that ceiling a durable refresh can come on the machine with this stack, and how much of the gap is the service's own work.
- **Settings**: \`GET /auth/me\` and \`POST /auth/refresh\` with \`AUTH_SESSIONS=per-device\`, with \`AUTH_JWT_ALGORITHM=EdDSA\` (an Ed25519 key made for the run, a PKCS#8 PEM file of mode 0600; refresh tokens stay HS256) and with \`AUDIT_RETENTION_DAYS=0\` (no audit trail: the events are logged only), each against the service with the defaults (\`single\`, HS256, a trail kept 90 days) on both backends${quickPostgresSettings}. The service with the setting runs beside the default one, on the same store at the same time (as two instances of one deployment share it; for \`AUDIT_RETENTION_DAYS=0\` each on a fresh store of its own, seeded alike, since a deployment does not mix the two, and on a shared store the service without a trail would commit through a SQLite WAL holding the other's audit rows), and only one of them is loaded at a time: the default (A) and the setting (B) alternate like every other figure, loaded like the HTTP-bound figures, each with access tokens and refresh chains of its own accounts (so that a login on one ends no session the other rotates), and the ratio is B ÷ A. \`GET /auth/me\` repeats each connection's access token, so it measures the verified-token memory (a token's signature is checked once, then remembered until its \`exp\`), as a client that repeats its token sees it; each refresh signs a new access token. These ratios have no target: they are reported, so that an operator can weigh the setting.
- **Start-up**: \`tessera serve\` started cold with the flags of \`npm start\`, timed from just before the process is spawned to its first \`GET /health\` 200 (polled every 5 ms), then stopped and waited for, on the embedded default with \`LOG_LEVEL=warn\` and \`WORKERS=1\`. As a developer's first run starts it (\`NODE_ENV=development\`, no \`AUTH_JWT_SECRET\`): on a fresh, empty \`DATA_DIR\` (the migrations run and the development secret is created) and on the same directory started again (already migrated). As production starts it (\`NODE_ENV=production\`, a random 36-byte \`AUTH_JWT_SECRET\`): on an existing \`DATA_DIR\`, migrated by one unmeasured production start before the pairs. Each start alternates with a cold start of the bare Fastify server, with the same Node.js flags and timed the same way: ${config.startupPairs} pairs for each of the three (${config.quickStartupPairs} with \`--quick\`), after one unmeasured start of each, before any other server of the run is up. Each of the three has the target ratio ≤ ${COLD_START_RATIO.toFixed(1)}: the service starts in at most twice the time bare Fastify takes.
- **Pipelined flood** (R8.8, embedded store only): a service on the same store with \`API_DOCS=true\` gets 300 connections, from 127.0.0.10 to 127.0.0.12 so that no address reaches its connection cap, each writing 1,500 pipelined \`GET /openapi.json\` (the largest answer) at once and reading nothing, for ${config.floodSeconds} s (${config.quickFloodSeconds} s with \`--quick\`), while two probes from 127.0.0.2 ask \`GET /health\` on a fresh connection each, one after the other, 40 ms apart. A first flood of the same length is logged and not counted: on a virtual machine the kernel's socket buffers (about a gigabyte here) come at first from memory the hypervisor must back again, which tripled the first flood's CPU. The row gives the probes' p99 (the median of ${config.pairs} rounds, the worst in brackets) against a target of 1,000 ms, and the service's peak RSS during the flood. \`test/hostile/pipelining.test.ts\` checks what the flood must not break (every probe answered, RSS under 300 MiB, the 33rd pipelined request refused), and no latency: a test must pass on a busy machine.
- **Accounts**: every store holds ${config.baselineUsers} accounts, seeded directly through the store (no HTTP, one precomputed hash). The large-store comparison seeds ${config.scaledUsers} accounts the same way and alternates a service on that store (B) with one on ${config.baselineUsers} accounts (A).${sqliteTokens}
- **Peak RSS** is the service process's high-water mark (VmHWM, reset at the start of each phase) or its VmRSS sampled every 50 ms, whichever is higher; the table gives the highest of the figure's phases.
- **Errors** are non-2xx responses where a 2xx was expected, connection errors and timeouts.

## How to reproduce

\`\`\`sh
npm ci
npm run bench   # with PostgreSQL + Redis where they answer (BENCH_POSTGRES_URL, BENCH_REDIS_URL to name them)
npm run bench -- --skip-postgres   # the embedded default only
npm run bench -- --quick   # two to three minutes: 2 pairs of 1 s phases, ${config.quickStartupPairs} of cold starts, ${config.quickScaledUsers} accounts in the large store
npm run bench -- --startup-only   # the cold starts alone (add --quick for fewer)
\`\`\`

When PostgreSQL or Redis does not answer the PostgreSQL + Redis run is skipped, and the output says so; the
PostgreSQL user needs the right to create databases. Each run prints its table and writes it to
\`bench/results/<time>.json\` and \`.md\`; a full run also writes this page with its figures to
\`bench/results/latest.md\` (\`diff docs/performance.md bench/results/latest.md\` compares the two runs), or over
this page with \`--write-docs\`. Nothing under \`bench/results/\` is committed. The command exits non-zero only when
the run itself fails; missed targets are listed at the end of its output.

The ratios to bare Fastify depend on the machine as much as on the code. Whether a change made the service slower is
answered by \`npm run bench:compare -- <git revision>\`: it builds that revision in a temporary git worktree (its own
build script, without the type check) and measures both builds on the embedded store (\`--postgres\`: on PostgreSQL +
Redis, a database and a key prefix for each build, except the cold starts), in an order that alternates from round
to round (\`--rounds N\`, default 10): the three cold starts beside bare Fastify's, \`POST /auth/login\`
beside raw Argon2 verify, and \`GET /auth/me\` and \`POST /auth/refresh\` beside bare Fastify (\`--seconds S\` per
load, default 3). \`--figures startup,login,me,refresh\` picks some of them. It prints each build's median ratio and
this build's ÷ the other's.

Where a figure's time goes is answered by \`npm run bench:threads -- <health|me|refresh|login|register>\` (\`--postgres\`
for PostgreSQL + Redis, \`--seconds S\`, \`--cpu-prof DIR\` for V8 profiles of every thread, \`--env NAME=VALUE\` to
set one of the service's variables over the benchmark's): it starts the built service as the benchmark does on a
seeded store, loads the endpoint after a warm-up, and prints each of the service's threads' CPU per request (user and
system), share of a core and context switches per request, and the machine's CPU split, from \`/proc\`. The
per-thread figures of the notes below were measured the same way. With \`--floor\` it loads the figure's floor instead,
the very server the benchmark's floor row starts (bare Fastify's \`GET /health\` for \`health\`, the refresh floor for
\`refresh\`, its Redis rotation with \`--postgres\`, the login and register floor for \`login\` and \`register\`), so that
what the service spends beside the floor can be read thread by thread.

## Notes

${notes}`
}

/** @param {RunReport} report */
function machineLine(report) {
  const m = report.machine
  return `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node.js ${m.node}, ${m.os}; load average at start ${m.loadAverageAtStart.join(', ')}.`
}

/** @param {RunReport} report */
function verdict(report) {
  const missed = missedTargets(report.rows)
  const lines = []
  if (report.skipped.length > 0) lines.push(...report.skipped.map((reason) => `- ${reason}`), '')
  if (missed.length === 0) lines.push('Every target holds.')
  else lines.push('Missed targets:', '', ...missed.map((row) => `- ${describeMiss(row)}`))
  return lines.join('\n')
}
