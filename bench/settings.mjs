// What a run does: the full run (about 12 minutes on two cores) or --quick (two to three), whether it rewrites
// docs/performance.md or runs the cold-start phase alone, where PostgreSQL and Redis are (unless --skip-postgres), and
// the service's Argon2 cost and concurrency, read the way the service reads them so the ceilings use the same values.
import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'

/** Where the tests find PostgreSQL and Redis by default (docs/development.md), and so the benchmark. */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres'
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

export const USAGE = `Usage: npm run bench -- [--quick] [--write-docs | --startup-only] [--skip-postgres]

Measures the service (built by npm run build) against bare Fastify and raw Argon2, and with AUTH_SESSIONS=per-device
and with AUTH_JWT_ALGORITHM=EdDSA against the defaults, in alternating pairs, on the embedded SQLite default and on
PostgreSQL + Redis, GET /health's p99 beside a pipelined flood, and tessera serve's cold start to its first
GET /health answer against bare Fastify's.
PostgreSQL + Redis are BENCH_POSTGRES_URL and BENCH_REDIS_URL, else TEST_POSTGRES_URL and TEST_REDIS_URL, else
${DEFAULT_POSTGRES_URL} and ${DEFAULT_REDIS_URL}; when either does not answer, that run is skipped
and the output says why (the PostgreSQL user needs the right to create databases).
Prints the table and writes it to bench/results/<time>.json and .md. A full run also writes the performance page
with its figures to bench/results/latest.md.

  --quick          short phases, fewer cold starts and a smaller large store: figures are indicative only
  --write-docs     a full run writes the page over docs/performance.md instead (its notes section is kept)
  --startup-only   the cold-start phase alone (writes no performance page)
  --skip-postgres  the embedded default only
  --help           this text`

/**
 * @typedef {'health' | 'me' | 'refresh' | 'refresh-floor' | 'login' | 'login-floor' | 'register' | 'register-floor' | 'mixed' | 'https' | 'per-device' | 'eddsa' | 'no-audit' | 'flood'} Figure
 * 'per-device', 'eddsa' and 'no-audit' are GET /auth/me and POST /auth/refresh with AUTH_SESSIONS=per-device, with
 * AUTH_JWT_ALGORITHM=EdDSA and with AUDIT_RETENTION_DAYS=0, each against the default service (on the same store, or
 * for 'no-audit' each on a store of its own: setting-figures.mjs); 'flood' is GET /health beside the pipelined flood
 * of docs/api.md R8.8 (flood-figures.mjs); 'login-floor' is the login floor (bare-login-server.mjs) against raw
 * Argon2, beside the service's login, and 'register-floor' the same server's registration (one hash) against raw
 * Argon2's hashes, beside the service's register; 'refresh-floor' the refresh floor (bare-refresh-server.mjs)
 * against bare Fastify, beside the service's refresh.
 */

const ALL_FIGURES = /** @type {Figure[]} */ ([
  'health',
  'me',
  'refresh',
  'refresh-floor',
  'login',
  'login-floor',
  'register',
  'register-floor',
  'mixed',
  'https',
  'per-device',
  'eddsa',
  'no-audit',
  'flood',
])
/**
 * TLS costs the same whatever the store, the flood is of connections and parsing, and the login and register floors
 * have no store: the HTTPS, flood, login-floor and register-floor figures are measured on the embedded default only
 * (the refresh floor on both, in each backend's store).
 */
const EMBEDDED_ONLY = new Set(['https', 'flood', 'login-floor', 'register-floor'])
const POSTGRES_FIGURES = ALL_FIGURES.filter((figure) => !EMBEDDED_ONLY.has(figure))

/**
 * @typedef {object} Settings
 * @property {boolean} quick
 * @property {boolean} writeDocs whether a full run rewrites docs/performance.md (--write-docs)
 * @property {boolean} help
 * @property {boolean} startupOnly only the cold-start phase (--startup-only)
 * @property {number} pairs A B pairs per ratio
 * @property {number} startupPairs A B pairs of cold starts (bare Fastify, then the service), for each data directory
 * @property {number} httpSeconds duration of one HTTP phase (and of its bare Fastify limit)
 * @property {number} argon2Seconds duration of one Argon2-bound phase (and of its raw Argon2 limit)
 * @property {number} warmupSeconds load on each endpoint before its pairs, not measured
 * @property {number} httpConnections connections of the HTTP phases, the bare Fastify limit and the refresh chains
 * @property {number} argon2Connections connections of the login and register phases: enough to keep Argon2 busy
 * @property {number} mixedMeConnections connections of GET /auth/me beside the saturating logins
 * @property {number} floodSeconds how long each round of the pipelined flood lasts (settings.pairs rounds)
 * @property {number} baselineUsers accounts in the store of every phase but the large one
 * @property {number} scaledUsers accounts in the large store
 * @property {boolean} postgresScale whether the large-store comparison runs on PostgreSQL as well
 * @property {{ embedded: Figure[], postgres: Figure[] }} figures what each backend measures
 * @property {import('./argon2-options.mjs').Argon2Cost} argon2
 * @property {number} hashConcurrency the service's AUTH_HASH_CONCURRENCY
 * @property {number} hashQueueLimit the service's AUTH_HASH_QUEUE_LIMIT
 * @property {{ databaseUrl: string, redisUrl: string } | null} postgres where PostgreSQL and Redis are, unless
 *   --skip-postgres (the run probes them before it uses them)
 * @property {string | null} postgresSkipReason why `postgres` is null
 */

/**
 * @param {readonly string[]} argv
 * @param {Readonly<Record<string, string | undefined>>} env
 * @returns {Settings}
 * @throws when an argument or variable is not valid (the message says which)
 */
export function readSettings(argv, env) {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      'write-docs': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
      'startup-only': { type: 'boolean', default: false },
      'skip-postgres': { type: 'boolean', default: false },
    },
    allowPositionals: false,
  })
  const quick = values.quick === true
  const writeDocs = values['write-docs'] === true
  // quick figures are indicative only: they never replace a full run's in the docs
  if (quick && writeDocs) throw new Error('--write-docs needs a full run: it cannot be used with --quick')
  const startupOnly = values['startup-only'] === true
  if (startupOnly && writeDocs) {
    throw new Error('--write-docs needs a full run: it cannot be used with --startup-only')
  }
  const hashConcurrency = integer(env, 'AUTH_HASH_CONCURRENCY', availableParallelism())
  const skipPostgres = values['skip-postgres'] === true
  const postgresUrl = env.BENCH_POSTGRES_URL?.trim() || env.TEST_POSTGRES_URL?.trim() || DEFAULT_POSTGRES_URL
  const redisUrl = env.BENCH_REDIS_URL?.trim() || env.TEST_REDIS_URL?.trim() || DEFAULT_REDIS_URL
  return {
    quick,
    writeDocs,
    help: values.help === true,
    startupOnly,
    pairs: quick ? 2 : 3,
    // a cold start takes a second or two and varies more than a phase of load: more pairs, for a steadier median
    startupPairs: quick ? 3 : 9,
    httpSeconds: quick ? 1 : 3,
    argon2Seconds: quick ? 1 : 4,
    warmupSeconds: quick ? 0.5 : 2,
    httpConnections: 16,
    // twice the concurrency waits in the queue, so a slot never idles for want of a request
    argon2Connections: hashConcurrency * 3,
    mixedMeConnections: 4,
    // the flood of test/hostile/pipelining.test.ts, which bounded /health's p99 before the bound moved here
    floodSeconds: quick ? 2 : 5,
    baselineUsers: 1_000,
    scaledUsers: quick ? 20_000 : 1_000_000,
    postgresScale: !quick,
    // --quick keeps the figures that have targets and the settings' comparisons, and on PostgreSQL only those that
    // differ most from SQLite: the refresh floor (its rotation is in Redis there) and, of the settings, per-device
    // sessions (a session is a row there, a hash in Redis); EdDSA changes the signing, which costs the same whatever
    // the store
    figures: quick
      ? {
          embedded: ALL_FIGURES.filter((figure) => figure !== 'health'),
          postgres: ['me', 'refresh', 'refresh-floor', 'login', 'per-device'],
        }
      : { embedded: ALL_FIGURES, postgres: POSTGRES_FIGURES },
    argon2: {
      memoryKiB: integer(env, 'AUTH_ARGON2_MEMORY_KIB', 19456),
      timeCost: integer(env, 'AUTH_ARGON2_TIME_COST', 2),
      parallelism: integer(env, 'AUTH_ARGON2_PARALLELISM', 1),
    },
    hashConcurrency,
    hashQueueLimit: integer(env, 'AUTH_HASH_QUEUE_LIMIT', 100),
    postgres: skipPostgres ? null : { databaseUrl: postgresUrl, redisUrl },
    postgresSkipReason: skipPostgres ? 'PostgreSQL + Redis run skipped: --skip-postgres' : null,
  }
}

/** A JWT secret for the services of a run: 36 random bytes, as strong as production asks. */
export function jwtSecret() {
  return randomBytes(36).toString('base64url')
}

/**
 * @param {Readonly<Record<string, string | undefined>>} env
 * @param {string} name
 * @param {number} fallback
 */
function integer(env, name, fallback) {
  const value = env[name]?.trim()
  if (value === undefined || value === '') return fallback
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`${name} must be a positive integer`)
  return Number(value)
}

/**
 * The variables every service of a run is started with (beside the store's and the setting's own): production, the
 * run's JWT secret, no rate limit (the load comes from one address), logs at warn, one process, and the Argon2 cost
 * and concurrency that the ceilings use.
 * @param {Settings} settings
 * @param {string} secret
 * @param {Record<string, string>} extra
 * @returns {Record<string, string>}
 */
export function serviceVariables(settings, secret, extra) {
  return {
    NODE_ENV: 'production',
    AUTH_JWT_SECRET: secret,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
    WORKERS: '1',
    ...argon2Variables(settings),
    AUTH_HASH_QUEUE_LIMIT: String(settings.hashQueueLimit),
    ...extra,
  }
}

/**
 * The Argon2 cost and concurrency of a run as the service's variables: what the service and the login floor are
 * started with, and what readSettings reads back.
 * @param {Settings} settings
 * @returns {Record<string, string>}
 */
export function argon2Variables(settings) {
  return {
    AUTH_ARGON2_MEMORY_KIB: String(settings.argon2.memoryKiB),
    AUTH_ARGON2_TIME_COST: String(settings.argon2.timeCost),
    AUTH_ARGON2_PARALLELISM: String(settings.argon2.parallelism),
    AUTH_HASH_CONCURRENCY: String(settings.hashConcurrency),
  }
}
