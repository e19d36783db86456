import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ACCESS_TOKEN_ALGORITHMS } from '../src/config/signing-config.js'
import { type Config, ConfigError, configWarnings, type Env, loadConfig } from '../src/config.js'

/** A strong secret: 48 random bytes in base64, as `openssl rand -base64 48` prints them. */
const SECRET = 'kX3v9Qm2Lr8TzP1wYb6NcHs0Jd4Fg7Ea5Uo+Ri/Vt2Mq8Wn1Ky3Ze6Bx9Ca0Dp4Gh7S'
/** `openssl rand -hex 32`: 64 characters of 16 possible. */
const HEX_SECRET = '9f2c4e1a7b3d8f60a5c2e9b14d7f3a8c6e0b2d5f9a1c4e7b3d8f2a6c0e5b9d14'
const weakSecret = (what: string) =>
  `${what} must have at least 32 characters, 10 of them distinct, in production`
const CORES = availableParallelism()
/** Production with what it requires, and nothing it warns about. */
const PRODUCTION: Env = {
  NODE_ENV: 'production',
  // a loopback address: production elsewhere needs TLS_CERT_FILE or TRUST_PROXY (R5.7.1)
  HOST: '127.0.0.1',
  AUTH_JWT_SECRET: SECRET,
  CORS_ORIGINS: 'https://app.example',
}

/** A value of the variable, and the other variables it is read with when not the case's own `with`. */
type Entry<T> = [value: string, expected: T, withVariables?: Env]

interface Variable {
  /** Where the variable lands in the Config. */
  read: (config: Config) => unknown
  /** Other variables it is always read with (CORS_ORIGINS is read in production only). */
  with?: Env
  default: unknown
  good: Entry<unknown>[]
  /** Each bad value and the exact one-line error. */
  bad: Entry<string>[]
  /** Values and the warnings they give. */
  warnings?: Entry<string[]>[]
}

const integerError = (name: string, bounds: string, value: string) =>
  `${name} must be an integer ${bounds}, got "${value}"`
const SAME_PORT = "METRICS_PORT must differ from PORT: the metrics are never served on the API's port"

/** A Standard Webhooks secret, and one of before a rotation. */
const WEBHOOK_SECRET_VALUE = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
const PREVIOUS_WEBHOOK_SECRET = `whsec_${Buffer.alloc(24, 3).toString('base64')}`
const OTHER_WEBHOOK_SECRET = `whsec_${Buffer.alloc(64, 5).toString('base64')}`
const WEBHOOK_SECRET_ERROR = (name: string) =>
  `${name} must be whsec_ followed by the base64 of 24 to 64 random bytes (the Standard Webhooks form), such as the output of: node -e "console.log('whsec_' + require('crypto').randomBytes(32).toString('base64'))"`

/** Every variable the configuration reads, one row each; a test below checks that none is missing. */
const VARIABLES: Record<string, Variable> = {
  NODE_ENV: {
    read: (config) => config.env,
    default: 'development',
    good: [
      ['development', 'development'],
      ['test', 'test'],
      ['production', 'production', { AUTH_JWT_SECRET: SECRET }],
    ],
    bad: [
      ['staging', 'NODE_ENV must be one of development, production, test, got "staging"'],
      ['Production', 'NODE_ENV must be one of development, production, test, got "Production"'],
    ],
  },

  // server
  HOST: {
    read: (config) => config.server.host,
    default: '0.0.0.0',
    good: [
      ['127.0.0.1', '127.0.0.1'],
      ['::', '::'],
      ['tessera.internal', 'tessera.internal'],
    ],
    bad: [],
  },
  PORT: {
    read: (config) => config.server.port,
    default: 3000,
    good: [
      ['8080', 8080],
      ['0', 0],
      ['65535', 65535],
    ],
    bad: ['abc', '70000', '65536', '-1', '80.5', '0x50', '1e3'].map((value) => [
      value,
      integerError('PORT', 'from 0 to 65535', value),
    ]),
  },
  TRUST_PROXY: {
    read: (config) => config.server.trustProxy,
    default: [],
    good: [
      ['10.0.0.0/8, 192.168.1.1, ::1, loopback', ['10.0.0.0/8', '192.168.1.1', '::1', 'loopback']],
      ['2001:db8::/32,linklocal,uniquelocal', ['2001:db8::/32', 'linklocal', 'uniquelocal']],
    ],
    bad: ['proxy.example.com', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0.0/x', '10.0.0.256'].map(
      (value) => [value, `TRUST_PROXY must list IP addresses or CIDR ranges, got "${value}"`],
    ),
  },
  TLS_CERT_FILE: {
    read: (config) => config.server.tls,
    default: null,
    good: [
      [
        '/etc/tessera/cert.pem',
        { certFile: '/etc/tessera/cert.pem', keyFile: '/etc/tessera/key.pem' },
        { TLS_KEY_FILE: '/etc/tessera/key.pem' },
      ],
      // R5.7.1: with the files, production listens anywhere
      [
        'cert.pem',
        { certFile: 'cert.pem', keyFile: 'key.pem' },
        { ...PRODUCTION, HOST: '0.0.0.0', TLS_KEY_FILE: 'key.pem' },
      ],
    ],
    bad: [
      ['cert.pem', 'TLS_CERT_FILE is set without TLS_KEY_FILE', {}],
      // R5.7.1: production on a public address, with neither the files nor a proxy that ends TLS
      [
        '',
        'TLS_CERT_FILE and TLS_KEY_FILE must be set in production, unless TRUST_PROXY names the proxy that ends TLS or HOST is a loopback address',
        { ...PRODUCTION, HOST: '0.0.0.0' },
      ],
    ],
  },
  TLS_KEY_FILE: {
    read: (config) => config.server.tls?.keyFile ?? null,
    default: null,
    good: [['/etc/tessera/key.pem', '/etc/tessera/key.pem', { TLS_CERT_FILE: '/etc/tessera/cert.pem' }]],
    bad: [['key.pem', 'TLS_KEY_FILE is set without TLS_CERT_FILE', {}]],
  },
  WORKERS: {
    read: (config) => config.server.workers,
    default: 1,
    good: [
      ['3', 3],
      ['256', 256],
      ['auto', CORES],
    ],
    bad: ['0', '257', '-1', '1.5', 'many', 'AUTO'].map((value) => [
      value,
      `WORKERS must be "auto" or an integer from 1 to 256, got "${value}"`,
    ]),
  },
  REQUEST_TIMEOUT_MS: {
    read: (config) => config.server.requestTimeoutMs,
    default: 10_000,
    good: [['30000', 30_000]],
    bad: ['0', 'soon', '10s'].map((value) => [
      value,
      integerError('REQUEST_TIMEOUT_MS', 'at least 1', value),
    ]),
  },
  HEADERS_TIMEOUT_MS: {
    read: (config) => config.server.headersTimeoutMs,
    default: 5_000,
    good: [['2000', 2_000]],
    bad: ['0', '-1', '1e3'].map((value) => [value, integerError('HEADERS_TIMEOUT_MS', 'at least 1', value)]),
  },
  // docs/api.md §8: null derives the cap from the file-descriptor limit at start
  MAX_CONNECTIONS: {
    read: (config) => config.server.maxConnections,
    default: null,
    good: [
      ['5000', 5_000],
      ['1', 1],
    ],
    bad: ['0', '-1', 'many', '1e4'].map((value) => [
      value,
      integerError('MAX_CONNECTIONS', 'at least 1', value),
    ]),
  },
  MAX_CONNECTIONS_PER_ADDRESS: {
    read: (config) => config.server.maxConnectionsPerAddress,
    default: 256,
    good: [['1000', 1_000]],
    bad: ['0', '-5', '2.5'].map((value) => [
      value,
      integerError('MAX_CONNECTIONS_PER_ADDRESS', 'at least 1', value),
    ]),
  },
  WRITE_TIMEOUT_MS: {
    read: (config) => config.server.writeTimeoutMs,
    default: 10_000,
    good: [['30000', 30_000]],
    bad: ['0', '10s'].map((value) => [value, integerError('WRITE_TIMEOUT_MS', 'at least 1', value)]),
  },
  METRICS_PORT: {
    read: (config) => config.server.metrics,
    default: null,
    good: [
      ['9464', { host: '127.0.0.1', port: 9464 }],
      ['0', { host: '127.0.0.1', port: 0 }],
      ['9464', { host: '10.0.0.5', port: 9464 }, { METRICS_HOST: '10.0.0.5' }],
    ],
    bad: [
      ...['abc', '65536', '-1', '94.64'].map(
        (value): Entry<string> => [value, integerError('METRICS_PORT', 'from 0 to 65535', value)],
      ),
      ['8080', SAME_PORT, { PORT: '8080' }],
      ['3000', SAME_PORT, {}],
    ],
  },
  METRICS_HOST: {
    read: (config) => config.server.metrics?.host ?? null,
    default: null,
    good: [
      ['0.0.0.0', '0.0.0.0', { METRICS_PORT: '9464' }],
      ['::1', '::1', { METRICS_PORT: '9464' }],
    ],
    bad: [['0.0.0.0', 'METRICS_HOST is set without METRICS_PORT', {}]],
  },
  PUBLIC_URL: {
    read: (config) => config.server.publicUrl,
    default: null,
    good: [
      ['https://auth.example.com', 'https://auth.example.com'],
      ['https://Example.COM/api/', 'https://example.com/api'],
      ['http://localhost:3000', 'http://localhost:3000'],
      // R5.5.6: production needs https, but on a loopback address
      ['https://auth.example.com', 'https://auth.example.com', PRODUCTION],
      ['http://127.0.0.1:3000/api', 'http://127.0.0.1:3000/api', PRODUCTION],
    ],
    bad: [
      ['auth.example.com', 'PUBLIC_URL must be a URL starting with http:// or https://'],
      ['ftp://auth.example.com', 'PUBLIC_URL must be a URL starting with http:// or https://'],
      ...[
        'https://auth.example.com/?x=1',
        'https://auth.example.com/#top',
        'https://u:p@auth.example.com',
      ].map(
        (value): Entry<string> => [
          value,
          `PUBLIC_URL must be a base URL such as https://auth.example.com/api, without credentials, query or fragment, got "${value.replace('u:p', '***')}"`,
        ],
      ),
      [
        'http://auth.example.com',
        'PUBLIC_URL must be an https URL in production (http only on a loopback address), got "http://auth.example.com"',
        PRODUCTION,
      ],
      // R5.5.6: the discovery document's JWKS URL is absolute, and never taken from a request's Host header
      [
        '',
        'PUBLIC_URL must be set in production with AUTH_JWT_ALGORITHM=EdDSA: /.well-known/openid-configuration names the JWKS by its absolute URL',
        { ...PRODUCTION, AUTH_JWT_ALGORITHM: 'EdDSA', AUTH_JWT_PRIVATE_KEY_FILE: 'key.pem' },
      ],
    ],
  },

  // auth
  AUTH_JWT_SECRET: {
    read: (config) => config.auth.jwtSecret,
    default: null,
    good: [
      [SECRET, SECRET],
      ['short', 'short'],
      [SECRET, SECRET, { NODE_ENV: 'production' }],
      [HEX_SECRET, HEX_SECRET, { NODE_ENV: 'production' }],
    ],
    bad: [
      [
        '',
        'AUTH_JWT_SECRET must be set in production (openssl rand -base64 48 makes one)',
        { NODE_ENV: 'production' },
      ],
      // trimmed like every variable: 32 spaces are no secret at all
      [
        ' '.repeat(32),
        'AUTH_JWT_SECRET must be set in production (openssl rand -base64 48 makes one)',
        { NODE_ENV: 'production' },
      ],
      // docs/api.md R5.5.3: at least 32 characters, 10 of them distinct
      ...[
        'secret',
        'x'.repeat(31),
        // 31 characters between the spaces
        ` ${SECRET.slice(0, 31)} `,
        'x'.repeat(32),
        '0'.repeat(64),
        'secretsecretsecretsecretsecretsecret',
        'abcdefghiabcdefghiabcdefghiabcdefghi',
      ].map((value): Entry<string> => [value, weakSecret('AUTH_JWT_SECRET'), { NODE_ENV: 'production' }]),
    ],
    warnings: [
      [
        'short',
        ['AUTH_JWT_SECRET must have at least 32 characters, 10 of them distinct; production refuses it'],
      ],
      [
        'x'.repeat(40),
        ['AUTH_JWT_SECRET must have at least 32 characters, 10 of them distinct; production refuses it'],
      ],
      [SECRET, []],
      [HEX_SECRET, []],
    ],
  },
  AUTH_JWT_PREVIOUS_SECRETS: {
    read: (config) => config.auth.previousJwtSecrets,
    with: { NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET, CORS_ORIGINS: 'https://app.example' },
    default: [],
    good: [
      [`${HEX_SECRET}, ${SECRET}`, [HEX_SECRET, SECRET]],
      [`${HEX_SECRET},,${SECRET},`, [HEX_SECRET, SECRET]],
      // outside production a weak previous secret is only warned about
      ['old-one, old-two', ['old-one', 'old-two'], {}],
    ],
    // the error names the entry, never its value
    bad: [
      ['secret', weakSecret('AUTH_JWT_PREVIOUS_SECRETS entry 1')],
      [`${HEX_SECRET},${'y'.repeat(32)}`, weakSecret('AUTH_JWT_PREVIOUS_SECRETS entry 2')],
      [`${SECRET},abcdefghijabcdefghij`, weakSecret('AUTH_JWT_PREVIOUS_SECRETS entry 2')],
    ],
    warnings: [
      [
        `${SECRET},secret`,
        [
          'AUTH_JWT_PREVIOUS_SECRETS entry 2 must have at least 32 characters, 10 of them distinct; production refuses it',
        ],
        {},
      ],
      [`${SECRET},${HEX_SECRET}`, []],
    ],
  },
  AUTH_JWT_ALGORITHM: {
    read: (config) => config.signing.algorithm,
    default: 'HS256',
    good: [
      ['HS256', 'HS256'],
      ['EdDSA', 'EdDSA'],
      ['ES256', 'ES256'],
      [
        'EdDSA',
        'EdDSA',
        { ...PRODUCTION, AUTH_JWT_PRIVATE_KEY_FILE: 'key.pem', PUBLIC_URL: 'https://a.example' },
      ],
    ],
    bad: [
      ...['RS256', 'none', 'eddsa', 'Ed25519'].map(
        (value): Entry<string> => [
          value,
          `AUTH_JWT_ALGORITHM must be one of HS256, EdDSA, ES256, got "${value}"`,
        ],
      ),
    ],
  },
  AUTH_JWT_PRIVATE_KEY_FILE: {
    // whether the file holds a key of the algorithm is checked at start (test/auth/access-token-keys.test.ts)
    read: (config) => config.signing.privateKeyFile,
    with: { AUTH_JWT_ALGORITHM: 'EdDSA' },
    default: null,
    good: [['/etc/tessera/jwt-key.pem', '/etc/tessera/jwt-key.pem']],
    bad: [
      ['key.pem', 'AUTH_JWT_PRIVATE_KEY_FILE is set, but AUTH_JWT_ALGORITHM is HS256 (the default)', {}],
      // R5.5.6: production has a key file of its own (one made on each machine would differ between instances)
      [
        '',
        'AUTH_JWT_PRIVATE_KEY_FILE must be set in production with AUTH_JWT_ALGORITHM=ES256 (tessera keys generate writes one)',
        { ...PRODUCTION, AUTH_JWT_ALGORITHM: 'ES256', PUBLIC_URL: 'https://a.example' },
      ],
    ],
  },
  AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES: {
    read: (config) => config.signing.previousPublicKeyFiles,
    with: { AUTH_JWT_ALGORITHM: 'ES256' },
    default: [],
    good: [['old.pem, older.pem,', ['old.pem', 'older.pem']]],
    bad: [
      [
        'old.pem',
        'AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES is set, but AUTH_JWT_ALGORITHM is HS256 (the default)',
        {},
      ],
    ],
  },
  AUTH_JWT_ISSUER: {
    read: (config) => config.signing.issuer,
    default: null,
    good: [
      ['https://auth.example.com', 'https://auth.example.com'],
      ['tessera', 'tessera'],
    ],
    bad: [
      ['an issuer', '"an issuer"'],
      ['a\tb', '"a\\tb"'],
      [':issuer', '":issuer"'],
      ['x'.repeat(257), `"${'x'.repeat(80)}"… (177 more characters)`],
    ].map(([value, shown]) => [
      value as string,
      `AUTH_JWT_ISSUER must be a URL or a name without a colon, of at most 256 characters and no spaces, got ${shown}`,
    ]),
  },
  AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES: {
    read: (config) => config.auth.accessTokenTtlSeconds,
    default: 15 * 60,
    good: [
      ['5', 5 * 60],
      ['1', 60],
      ['525600', 525_600 * 60],
    ],
    bad: ['0', '-5', '525601', '15m'].map((value) => [
      value,
      integerError('AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES', 'from 1 to 525600', value),
    ]),
    warnings: [
      ['4', ['AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES is 4; the recommended range is 5 to 30']],
      ['5', []],
      ['30', []],
      ['60', ['AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES is 60; the recommended range is 5 to 30']],
    ],
  },
  AUTH_REFRESH_TOKEN_EXPIRATION_DAYS: {
    read: (config) => config.auth.refreshTokenTtlSeconds,
    default: 7 * 86_400,
    good: [
      ['30', 30 * 86_400],
      ['3650', 3650 * 86_400],
    ],
    bad: ['0', '3651', 'seven'].map((value) => [
      value,
      integerError('AUTH_REFRESH_TOKEN_EXPIRATION_DAYS', 'from 1 to 3650', value),
    ]),
    warnings: [
      ['1', ['AUTH_REFRESH_TOKEN_EXPIRATION_DAYS is 1; the recommended range is 7 to 30']],
      ['7', []],
      ['30', []],
      ['31', ['AUTH_REFRESH_TOKEN_EXPIRATION_DAYS is 31; the recommended range is 7 to 30']],
    ],
  },
  AUTH_ARGON2_MEMORY_KIB: {
    read: (config) => config.auth.argon2.memoryKiB,
    default: 19456,
    good: [
      ['65536', 65536],
      ['8', 8],
      ['4194304', 4_194_304],
    ],
    bad: [
      ...['7', '4194305', '1e6', '64M'].map(
        (value): Entry<string> => [value, integerError('AUTH_ARGON2_MEMORY_KIB', 'from 8 to 4194304', value)],
      ),
      [
        '15',
        'AUTH_ARGON2_MEMORY_KIB must be at least 8 × AUTH_ARGON2_PARALLELISM (16)',
        { AUTH_ARGON2_PARALLELISM: '2' },
      ],
    ],
    warnings: [
      [
        '1024',
        [
          'AUTH_ARGON2_MEMORY_KIB=1024 with AUTH_ARGON2_TIME_COST=2 is below the OWASP minimum (19456 KiB, t=2)',
        ],
        PRODUCTION,
      ],
      // OWASP's rows are equivalent: less memory with more passes is fine
      ['12288', [], { ...PRODUCTION, AUTH_ARGON2_TIME_COST: '3' }],
      ['47104', [], { ...PRODUCTION, AUTH_ARGON2_TIME_COST: '1' }],
      // outside production (tests, development) cheap settings are expected
      ['1024', []],
    ],
  },
  AUTH_ARGON2_TIME_COST: {
    read: (config) => config.auth.argon2.timeCost,
    default: 2,
    good: [
      ['3', 3],
      ['100', 100],
    ],
    bad: ['0', '101', 'two'].map((value) => [
      value,
      integerError('AUTH_ARGON2_TIME_COST', 'from 1 to 100', value),
    ]),
    warnings: [
      [
        '1',
        [
          'AUTH_ARGON2_MEMORY_KIB=19456 with AUTH_ARGON2_TIME_COST=1 is below the OWASP minimum (19456 KiB, t=2)',
        ],
        PRODUCTION,
      ],
      ['1', []],
    ],
  },
  AUTH_ARGON2_PARALLELISM: {
    read: (config) => config.auth.argon2.parallelism,
    default: 1,
    good: [
      ['2', 2],
      ['255', 255],
    ],
    bad: ['0', '256'].map((value) => [
      value,
      integerError('AUTH_ARGON2_PARALLELISM', 'from 1 to 255', value),
    ]),
  },
  AUTH_HASH_CONCURRENCY: {
    read: (config) => config.auth.hashConcurrency,
    // one per core with one worker process; see the test on sharing below
    default: CORES,
    good: [
      ['3', 3],
      ['1024', 1024],
      ['3', 3, { WORKERS: 'auto' }],
    ],
    bad: ['0', '1025', 'all'].map((value) => [
      value,
      integerError('AUTH_HASH_CONCURRENCY', 'from 1 to 1024', value),
    ]),
  },
  AUTH_HASH_QUEUE_LIMIT: {
    read: (config) => config.auth.hashQueueLimit,
    default: 100,
    good: [
      ['0', 0],
      ['500', 500],
    ],
    bad: ['-1', 'none'].map((value) => [value, integerError('AUTH_HASH_QUEUE_LIMIT', 'at least 0', value)]),
  },
  AUTH_LOGIN_BACKOFF_AFTER: {
    read: (config) => config.auth.loginBackoff.afterFailures,
    default: 5,
    good: [
      ['0', 0],
      ['10', 10],
    ],
    bad: ['-1', '1001', 'five'].map((value) => [
      value,
      integerError('AUTH_LOGIN_BACKOFF_AFTER', 'from 0 to 1000', value),
    ]),
  },
  AUTH_LOGIN_BACKOFF_MAX_SECONDS: {
    read: (config) => config.auth.loginBackoff.maxDelaySeconds,
    default: 300,
    good: [
      ['1', 1],
      ['3600', 3600],
    ],
    bad: ['0', '86401', '5m'].map((value) => [
      value,
      integerError('AUTH_LOGIN_BACKOFF_MAX_SECONDS', 'from 1 to 86400', value),
    ]),
  },

  // sessions
  AUTH_SESSIONS: {
    read: (config) => config.sessions.mode,
    default: 'single',
    good: [
      ['single', 'single'],
      ['per-device', 'per-device'],
    ],
    bad: ['multi', 'Per-Device'].map((value) => [
      value,
      `AUTH_SESSIONS must be one of single, per-device, got "${value}"`,
    ]),
  },
  AUTH_MAX_SESSIONS: {
    read: (config) => config.sessions.maxSessions,
    default: 10,
    good: [
      ['1', 1],
      ['1000', 1000],
    ],
    bad: ['0', '1001', 'ten'].map((value) => [
      value,
      integerError('AUTH_MAX_SESSIONS', 'from 1 to 1000', value),
    ]),
  },
  AUTH_REFRESH_REUSE_GRACE_SECONDS: {
    read: (config) => config.sessions.reuseGraceSeconds,
    default: 0,
    good: [
      ['10', 10],
      ['60', 60],
    ],
    bad: ['-1', '61', '10s'].map((value) => [
      value,
      integerError('AUTH_REFRESH_REUSE_GRACE_SECONDS', 'from 0 to 60', value),
    ]),
  },
  AUTH_REFRESH_REUSE_ENDS_SESSION: {
    read: (config) => config.sessions.reuseEndsSession,
    default: false,
    good: [
      ['true', true],
      ['false', false],
    ],
    bad: [['yes', 'AUTH_REFRESH_REUSE_ENDS_SESSION must be one of true, false, got "yes"']],
  },
  AUTH_SESSION_LIFETIME_DAYS: {
    read: (config) => config.sessions.lifetimeMs,
    default: null,
    good: [
      ['1', 86_400_000],
      ['30', 30 * 86_400_000],
      ['3650', 3650 * 86_400_000],
    ],
    bad: ['0', '-1', '3651', '1.5', '30d'].map((value) => [
      value,
      integerError('AUTH_SESSION_LIFETIME_DAYS', 'from 1 to 3650', value),
    ]),
  },

  // mail and codes (docs/api.md §4.14, §6.4)
  SMTP_URL: {
    read: (config) => [config.mail.smtpUrl, config.mail.available],
    default: [null, true],
    good: [
      ['smtp://mailer:secret@mail.example:587', ['smtp://mailer:secret@mail.example:587', true]],
      ['smtps://mail.example:465', ['smtps://mail.example:465', true]],
      // production without it: no mail can be sent
      ['', [null, false], PRODUCTION],
    ],
    bad: ['http://mail.example', 'mail.example:25', 'not a url'].map((value) => [
      value,
      'SMTP_URL must be a URL starting with smtp:// or smtps://',
    ]),
  },
  MAIL_FROM: {
    read: (config) => config.mail.from,
    default: 'no-reply@localhost',
    good: [['Tessera <auth@example.com>', 'Tessera <auth@example.com>']],
    bad: [],
  },
  MAIL_PRODUCT_NAME: {
    read: (config) => config.mail.productName,
    default: 'Tessera',
    good: [['Acme Docs', 'Acme Docs']],
    bad: [],
  },
  MAIL_TEMPLATES_DIR: {
    // whether its files can be used is checked at start (test/mail/mail-templates.test.ts)
    read: (config) => config.mail.templatesDir,
    default: null,
    good: [['/etc/tessera/mail', '/etc/tessera/mail']],
    bad: [],
  },
  MAIL_RETRY_SECONDS: {
    read: (config) => config.mail.retrySeconds,
    default: 30,
    good: [['5', 5]],
    bad: ['0', '3601', 'soon'].map((value) => [
      value,
      integerError('MAIL_RETRY_SECONDS', 'from 1 to 3600', value),
    ]),
  },
  MAIL_SEND_TIMEOUT_SECONDS: {
    read: (config) => config.mail.sendTimeoutSeconds,
    default: 30,
    good: [['10', 10]],
    bad: ['0', '601'].map((value) => [
      value,
      integerError('MAIL_SEND_TIMEOUT_SECONDS', 'from 1 to 600', value),
    ]),
  },
  MAIL_SEND_CONNECTIONS: {
    read: (config) => config.mail.sendConnections,
    default: 5,
    good: [
      ['1', 1],
      ['20', 20],
    ],
    bad: ['0', '51', 'many'].map((value) => [
      value,
      integerError('MAIL_SEND_CONNECTIONS', 'from 1 to 50', value),
    ]),
  },
  EMAIL_CODE_TTL_SECONDS: {
    read: (config) => config.codes.ttlSeconds,
    default: 600,
    good: [['900', 900]],
    bad: ['59', '86401', 'ten'].map((value) => [
      value,
      integerError('EMAIL_CODE_TTL_SECONDS', 'from 60 to 86400', value),
    ]),
  },
  EMAIL_CODE_RESEND_SECONDS: {
    read: (config) => config.codes.resendSeconds,
    default: 60,
    good: [
      ['0', 0],
      ['120', 120],
    ],
    bad: ['-1', '3601'].map((value) => [
      value,
      integerError('EMAIL_CODE_RESEND_SECONDS', 'from 0 to 3600', value),
    ]),
  },
  EMAIL_CODE_HOURLY_LIMIT: {
    read: (config) => config.codes.hourlyLimit,
    default: 10,
    good: [['3', 3]],
    bad: ['0', '10001'].map((value) => [
      value,
      integerError('EMAIL_CODE_HOURLY_LIMIT', 'from 1 to 10000', value),
    ]),
  },
  PASSWORD_RESET_URL: {
    read: (config) => config.mail.passwordResetUrl,
    default: null,
    good: [
      ['https://app.example/reset?key={key}', 'https://app.example/reset?key={key}'],
      [
        'https://app.example/reset#key={key}&email={email}',
        'https://app.example/reset#key={key}&email={email}',
      ],
      ['https://app.example/reset/{key}', 'https://app.example/reset/{key}', PRODUCTION],
      // development: http to a loopback address, the application on the developer's machine
      ['http://localhost:5173/reset?key={key}', 'http://localhost:5173/reset?key={key}'],
      ['http://127.0.0.1:5173/reset?key={key}', 'http://127.0.0.1:5173/reset?key={key}'],
    ],
    bad: [
      [
        'https://app.example/reset',
        'PASSWORD_RESET_URL must contain {key}, where the link gives the reset key',
      ],
      [
        'https://app.example/reset?code={code}&key={key}',
        'PASSWORD_RESET_URL may hold no placeholder but {key} and {email}',
      ],
      ['/reset?key={key}', 'PASSWORD_RESET_URL must be an https URL with {key} in it'],
      ['ftp://app.example/{key}', 'PASSWORD_RESET_URL must be an https URL with {key} in it'],
      ['javascript:alert({key})', 'PASSWORD_RESET_URL must be an https URL with {key} in it'],
      ...[
        ['http://app.example/reset?key={key}'],
        ['http://192.168.1.5:5173/reset?key={key}'],
        ['http://localhost:5173/reset?key={key}', PRODUCTION],
      ].map(
        ([value, withVariables]) =>
          [
            value,
            'PASSWORD_RESET_URL must be an https URL (http only to a loopback address in development): the link carries the reset key',
            withVariables,
          ] as Entry<string>,
      ),
    ],
  },
  AUTH_REGISTER_CODE: {
    read: (config) => config.codes.register,
    default: 'optional',
    good: [
      ['required', 'required'],
      ['required', 'required', { ...PRODUCTION, SMTP_URL: 'smtp://mail.example:587' }],
    ],
    bad: [
      ['always', 'AUTH_REGISTER_CODE must be one of optional, required, got "always"'],
      ['required', 'AUTH_REGISTER_CODE is required, but no mail can be sent: set SMTP_URL', PRODUCTION],
    ],
  },

  // storage
  DATA_DIR: {
    // it also moves the default SQLite file
    read: (config) => [config.storage.dataDir, config.storage.databaseUrl],
    default: ['./data', 'sqlite:./data/app.db'],
    good: [
      ['/var/lib/tessera/', ['/var/lib/tessera/', 'sqlite:/var/lib/tessera/app.db']],
      ['state', ['state', 'sqlite:state/app.db']],
      [
        '/srv/tessera',
        ['/srv/tessera', 'postgres://u@db/tessera'],
        { DATABASE_URL: 'postgres://u@db/tessera' },
      ],
    ],
    bad: [],
  },
  DATABASE_URL: {
    read: (config) => config.storage.databaseUrl,
    default: 'sqlite:./data/app.db',
    good: [
      ['sqlite:/var/lib/tessera/app.db', 'sqlite:/var/lib/tessera/app.db'],
      ['postgres://u@db/tessera', 'postgres://u@db/tessera'],
      ['postgresql://u:p@db:5432/tessera', 'postgresql://u:p@db:5432/tessera'],
      ['mysql://root@db:3306/tessera', 'mysql://root@db:3306/tessera'],
      ['mariadb://root@db/tessera', 'mariadb://root@db/tessera'],
    ],
    bad: [
      ['sqlite:', 'DATABASE_URL names no SQLite file'],
      // the value is not quoted: it may carry a password
      ...['ftp://db/tessera', 'http://u:hunter2@db/tessera', 'not a url', 'db.internal:5432'].map(
        (value): Entry<string> => [
          value,
          'DATABASE_URL must start with sqlite:, postgres://, postgresql://, mysql:// or mariadb://',
        ],
      ),
    ],
  },
  DATABASE_MAX_CONNECTIONS: {
    read: (config) => config.storage.maxConnections,
    default: 10,
    good: [
      ['20', 20],
      ['1', 1],
      ['1000', 1000],
    ],
    bad: ['0', '1001', 'ten'].map((value) => [
      value,
      integerError('DATABASE_MAX_CONNECTIONS', 'from 1 to 1000', value),
    ]),
  },
  REDIS_URL: {
    read: (config) => config.storage.redisUrl,
    default: null,
    good: [
      ['redis://cache:6379', 'redis://cache:6379'],
      ['rediss://:secret@cache.example:6380/2', 'rediss://:secret@cache.example:6380/2'],
    ],
    bad: ['http://cache:6379', 'cache:6379', 'not a url', 'redis+sentinel://s:26379'].map((value) => [
      value,
      'REDIS_URL must be a URL starting with redis:// or rediss://',
    ]),
  },
  REDIS_KEY_PREFIX: {
    read: (config) => config.storage.redisKeyPrefix,
    default: 'tessera:',
    good: [['staging:tessera:', 'staging:tessera:']],
    bad: [],
  },
  STORAGE_TIMEOUT_MS: {
    read: (config) => config.storage.operationTimeoutMs,
    default: 5_000,
    good: [['250', 250]],
    bad: ['0', 'fast'].map((value) => [value, integerError('STORAGE_TIMEOUT_MS', 'at least 1', value)]),
  },
  AUDIT_RETENTION_DAYS: {
    read: (config) => config.audit.retentionDays,
    default: 90,
    good: [
      ['30', 30],
      ['0', 0],
      ['36500', 36_500],
    ],
    bad: ['-1', '36501', '90d', '1.5'].map((value) => [
      value,
      integerError('AUDIT_RETENTION_DAYS', 'from 0 to 36500', value),
    ]),
  },

  // http
  CORS_ORIGINS: {
    read: (config) => config.http.corsOrigins,
    with: { NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET },
    default: [],
    good: [
      ['https://a.example, https://b.example:8443/', ['https://a.example', 'https://b.example:8443']],
      ['http://localhost:5173', ['http://localhost:5173']],
      ['http://127.0.0.1:8080, http://[::1]:3000', ['http://127.0.0.1:8080', 'http://[::1]:3000']],
      // outside production any origin may call, whatever the variable says
      ['https://a.example', '*', {}],
      ['not an origin', '*', { NODE_ENV: 'test' }],
    ],
    bad: [
      ...['https://a.example/path', 'app.example.com', 'https://a.example?x=1', '*'].map(
        (value): Entry<string> => [
          value,
          `CORS_ORIGINS must list origins such as https://app.example.com, got "${value}"`,
        ],
      ),
      // R5.8.5: a page served over plain HTTP cannot keep tokens from whoever is on its network path
      ...['http://app.example', 'https://a.example, http://b.example:8080'].map(
        (value): Entry<string> => [
          value,
          `CORS_ORIGINS must list https origins in production (http only on a loopback address), got "${value.split(', ').at(-1)}"`,
        ],
      ),
    ],
    warnings: [
      ['', ['CORS_ORIGINS is empty: browsers on other origins cannot call the service']],
      ['https://app.example', []],
      ['', [], {}],
    ],
  },
  RATE_LIMIT_PER_MINUTE: {
    read: (config) => config.http.rateLimitPerMinute,
    default: 30,
    good: [
      ['0', 0],
      ['120', 120],
    ],
    bad: ['-1', 'lots'].map((value) => [value, integerError('RATE_LIMIT_PER_MINUTE', 'at least 0', value)]),
  },
  API_DOCS: {
    read: (config) => config.http.apiDocs,
    default: true,
    good: [
      ['false', false],
      ['true', true],
      // production serves no documentation unless asked to (R4.9.1)
      ['false', false, PRODUCTION],
      ['true', true, PRODUCTION],
    ],
    bad: ['yes', '0', 'TRUE'].map((value) => [value, `API_DOCS must be one of true, false, got "${value}"`]),
  },
  DEMO_PAGE: {
    read: (config) => config.http.demoPage,
    default: true,
    good: [
      ['false', false],
      ['true', true],
      // production serves no demo page unless asked to
      ['false', false, PRODUCTION],
      ['true', true, PRODUCTION],
    ],
    bad: ['yes', '1'].map((value) => [value, `DEMO_PAGE must be one of true, false, got "${value}"`]),
  },
  ADMIN_CONSOLE: {
    read: (config) => config.http.adminConsole,
    default: true,
    good: [
      ['false', false],
      ['true', true],
      // production serves no admin console unless asked to
      ['false', false, PRODUCTION],
      ['true', true, PRODUCTION],
    ],
    bad: ['yes', 'on'].map((value) => [value, `ADMIN_CONSOLE must be one of true, false, got "${value}"`]),
  },
  BASE_PATH: {
    read: (config) => config.http.basePath,
    default: '',
    good: [
      ['/api', '/api'],
      ['/api/', '/api'],
      ['/tessera/v1', '/tessera/v1'],
      ['/', ''],
      ['/a-b_c.d~e', '/a-b_c.d~e'],
    ],
    bad: [
      ...['api', '/api?x=1', '/a b', '//api', '/api//v1', '/%61pi', '/ä'].map(
        (value): Entry<string> => [
          value,
          `BASE_PATH must be a path such as /api (segments of letters, digits and -._~), got "${value}"`,
        ],
      ),
      ...['/..', '/api/./v1'].map(
        (value): Entry<string> => [value, `BASE_PATH must not hold . or .. segments, got "${value}"`],
      ),
    ],
  },
  HEALTH_TIMEOUT_MS: {
    read: (config) => config.http.healthTimeoutMs,
    default: 1_000,
    good: [['250', 250]],
    bad: ['0', 'soon'].map((value) => [value, integerError('HEALTH_TIMEOUT_MS', 'at least 1', value)]),
  },

  // logging and the site configuration
  LOG_LEVEL: {
    read: (config) => config.logLevel,
    default: 'info',
    good: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => [level, level]),
    bad: ['verbose', 'INFO'].map((value) => [
      value,
      `LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "${value}"`,
    ]),
  },
  // sign-in with providers (docs/api.md §4.24)
  OAUTH_PROVIDERS: {
    read: (config) => config.providers.enabled.map((provider) => provider.name),
    with: {
      OAUTH_GOOGLE_CLIENT_ID: 'google-id',
      OAUTH_GOOGLE_CLIENT_SECRET: 'google-secret',
      OAUTH_GITHUB_CLIENT_ID: 'github-id',
      OAUTH_GITHUB_CLIENT_SECRET: 'github-secret',
    },
    default: [],
    good: [
      ['google', ['google']],
      ['google, github', ['google', 'github']],
    ],
    bad: [
      ['exchange', 'OAUTH_PROVIDERS must not list "exchange": a route of its own has that name'],
      ['google,google', 'OAUTH_PROVIDERS lists "google" twice'],
    ],
  },
  FRONTEND_ORIGIN: {
    read: (config) => config.providers.frontendOrigin,
    default: 'http://localhost:3000',
    good: [
      ['https://app.example.com', 'https://app.example.com'],
      ['HTTPS://App.Example.com:443', 'https://app.example.com'],
      ['http://127.0.0.1:5173', 'http://127.0.0.1:5173'],
    ],
    bad: ['https://app.example.com/', 'app.example.com', 'https://app.example.com/path'].map((value) => [
      value,
      `FRONTEND_ORIGIN must be an origin such as https://app.example.com (scheme, host and port only), got "${value}"`,
    ]),
  },
  OAUTH_GITHUB_URL: {
    read: (config) => config.providers.enabled[0],
    with: { OAUTH_PROVIDERS: 'github', OAUTH_GITHUB_CLIENT_ID: 'id', OAUTH_GITHUB_CLIENT_SECRET: 'secret' },
    default: expect.objectContaining({ webUrl: 'https://github.com', apiUrl: 'https://api.github.com' }),
    good: [
      [
        'https://git.example.com/',
        expect.objectContaining({
          webUrl: 'https://git.example.com',
          apiUrl: 'https://git.example.com/api/v3',
        }),
      ],
    ],
    bad: [
      [
        'https://git.example.com/?x=1',
        'OAUTH_GITHUB_URL must be an https URL without credentials, query or fragment',
      ],
    ],
  },
  OAUTH_GITHUB_API_URL: {
    read: (config) => config.providers.enabled[0],
    with: { OAUTH_PROVIDERS: 'github', OAUTH_GITHUB_CLIENT_ID: 'id', OAUTH_GITHUB_CLIENT_SECRET: 'secret' },
    default: expect.objectContaining({ apiUrl: 'https://api.github.com' }),
    good: [
      ['https://api.git.example.com', expect.objectContaining({ apiUrl: 'https://api.git.example.com' })],
    ],
    bad: [
      [
        'https://u:p@api.example.com',
        'OAUTH_GITHUB_API_URL must be an https URL without credentials, query or fragment',
      ],
    ],
  },
  MFA_ISSUER: {
    read: (config) => config.mfa.issuer,
    default: 'Tessera',
    good: [
      ['Acme', 'Acme'],
      ['Acme Docs', 'Acme Docs', { MAIL_PRODUCT_NAME: 'Other' }],
    ],
    bad: [
      ['Acme: Docs', 'MFA_ISSUER must be one line of at most 64 characters without a colon'],
      ['x'.repeat(65), 'MFA_ISSUER must be one line of at most 64 characters without a colon'],
    ],
  },
  ADMIN_ROLE: {
    read: (config) => config.admin.role,
    default: 'tessera-admin',
    good: [
      ['support-desk', 'support-desk'],
      ['a', 'a'],
    ],
    bad: [
      ['user', 'ADMIN_ROLE must not be user, the role of every account that was given none'],
      [
        'Admin',
        `ADMIN_ROLE must be a role's name: 1 to 32 of a-z 0-9 _ - starting with a letter, got "Admin"`,
      ],
      [
        '1admin',
        `ADMIN_ROLE must be a role's name: 1 to 32 of a-z 0-9 _ - starting with a letter, got "1admin"`,
      ],
      [
        'a'.repeat(33),
        `ADMIN_ROLE must be a role's name: 1 to 32 of a-z 0-9 _ - starting with a letter, got "${'a'.repeat(33)}"`,
      ],
    ],
  },
  ADMIN_REQUIRE_MFA: {
    read: (config) => config.admin.requireMfa,
    default: true,
    good: [
      ['false', false],
      ['true', true],
    ],
    bad: [['no', 'ADMIN_REQUIRE_MFA must be one of true, false, got "no"']],
  },
  WEBAUTHN_RP_ID: {
    read: (config) => config.mfa.relyingParty,
    with: { FRONTEND_ORIGIN: 'https://app.example.com', PUBLIC_URL: 'https://auth.example.com/api' },
    // by default FRONTEND_ORIGIN's host, which PUBLIC_URL's is not under: that origin is left out, with a warning
    default: {
      id: 'app.example.com',
      name: 'Tessera',
      origins: ['https://app.example.com'],
      anyLocalhostPort: false,
    },
    good: [
      [
        'example.com',
        {
          id: 'example.com',
          name: 'Tessera',
          origins: ['https://app.example.com', 'https://auth.example.com'],
          anyLocalhostPort: false,
        },
      ],
      [
        'Example.COM',
        expect.objectContaining({
          id: 'example.com',
          origins: ['https://app.example.com', 'https://auth.example.com'],
        }),
      ],
      [
        'app.example.com',
        expect.objectContaining({ id: 'app.example.com' }),
        { FRONTEND_ORIGIN: 'https://app.example.com' },
      ],
    ],
    bad: [
      ...[
        'https://example.com',
        'example.com:443',
        '192.0.2.1',
        '::1',
        '2001:db8::1',
        'exa mple.com',
        '-example.com',
      ].map(
        (value): Entry<string> => [
          value,
          `WEBAUTHN_RP_ID must be a host name such as example.com (no scheme, port or IP address), got "${value}"`,
        ],
      ),
      [
        'app.example.com',
        "WEBAUTHN_RP_ID is app.example.com, which does not cover PUBLIC_URL's origin https://auth.example.com: every origin must be the relying party's domain or a subdomain of it",
      ],
      [
        'example.org',
        "WEBAUTHN_RP_ID is example.org, which does not cover FRONTEND_ORIGIN's origin https://app.example.com: every origin must be the relying party's domain or a subdomain of it",
      ],
    ],
    warnings: [
      ['example.com', []],
      [
        '',
        [
          "passkeys are not accepted from PUBLIC_URL's origin https://auth.example.com: it is not under the relying party app.example.com (FRONTEND_ORIGIN's host); set WEBAUTHN_RP_ID to a domain both share",
        ],
      ],
    ],
  },
  WEBHOOK_URLS: {
    read: (config) => config.webhooks.urls,
    with: { WEBHOOK_SECRET: WEBHOOK_SECRET_VALUE },
    default: [],
    good: [
      ['https://app.example/hooks/tessera', ['https://app.example/hooks/tessera']],
      [
        'https://a.example/hook, https://user:pass@b.example/hook?x=1',
        ['https://a.example/hook', 'https://user:pass@b.example/hook?x=1'],
      ],
      [
        'https://app.example/hook',
        ['https://app.example/hook'],
        { ...PRODUCTION, WEBHOOK_SECRET: WEBHOOK_SECRET_VALUE },
      ],
      // outside production: http to a loopback host, the application on the developer's machine
      [
        'http://127.0.0.1:4000/hook,http://localhost/hook',
        ['http://127.0.0.1:4000/hook', 'http://localhost/hook'],
      ],
    ],
    bad: [
      ...[
        ['http://app.example/hook'],
        ['https://ok.example/hook,http://user:secret@10.0.0.5/hook'],
        ['ftp://app.example/hook'],
        ['not a url'],
        ['http://127.0.0.1:4000/hook', { ...PRODUCTION, WEBHOOK_SECRET: WEBHOOK_SECRET_VALUE }],
      ].map(
        ([value, withVariables]): Entry<string> => [
          value as string,
          `WEBHOOK_URLS item ${String(value).includes(',') ? 2 : 1} must be an absolute https URL (http only to a loopback host outside production)`,
          (withVariables as Env | undefined) ?? { WEBHOOK_SECRET: WEBHOOK_SECRET_VALUE },
        ],
      ),
      [
        'https://a.example/hook,https://a.example/hook',
        'WEBHOOK_URLS lists a URL twice: each event would be posted to it twice',
      ],
      [
        'https://a.example/hook',
        'WEBHOOK_URLS is set without WEBHOOK_SECRET, which signs the events (whsec_ and the base64 of 24 to 64 random bytes)',
        {},
      ],
    ],
  },
  WEBHOOK_SECRET: {
    read: (config) => config.webhooks.secrets,
    default: [],
    good: [
      [WEBHOOK_SECRET_VALUE, [WEBHOOK_SECRET_VALUE], { WEBHOOK_URLS: 'https://app.example/hook' }],
      [OTHER_WEBHOOK_SECRET, [OTHER_WEBHOOK_SECRET], { WEBHOOK_URLS: 'https://app.example/hook' }],
      // without a URL no secret is kept: nothing is signed
      [WEBHOOK_SECRET_VALUE, []],
    ],
    bad: [
      WEBHOOK_SECRET_VALUE.slice('whsec_'.length),
      `whsec_${Buffer.alloc(16, 1).toString('base64')}`,
      `whsec_${Buffer.alloc(65, 1).toString('base64')}`,
      `whsec_${Buffer.alloc(32, 1).toString('base64').replace(/=+$/, '')}!`,
      `whsec_${Buffer.alloc(32, 1).toString('base64url')}-_`,
      'whsec_',
    ].map((value): Entry<string> => [value, WEBHOOK_SECRET_ERROR('WEBHOOK_SECRET')]),
  },
  WEBHOOK_PREVIOUS_SECRETS: {
    read: (config) => config.webhooks.secrets,
    with: { WEBHOOK_URLS: 'https://app.example/hook', WEBHOOK_SECRET: WEBHOOK_SECRET_VALUE },
    default: [WEBHOOK_SECRET_VALUE],
    good: [
      [
        `${PREVIOUS_WEBHOOK_SECRET}, ${OTHER_WEBHOOK_SECRET}`,
        [WEBHOOK_SECRET_VALUE, PREVIOUS_WEBHOOK_SECRET, OTHER_WEBHOOK_SECRET],
      ],
    ],
    bad: [
      [`${PREVIOUS_WEBHOOK_SECRET},secret`, WEBHOOK_SECRET_ERROR('WEBHOOK_PREVIOUS_SECRETS')],
      [
        PREVIOUS_WEBHOOK_SECRET,
        'WEBHOOK_PREVIOUS_SECRETS is set without WEBHOOK_SECRET, the current secret',
        { WEBHOOK_URLS: 'https://app.example/hook' },
      ],
    ],
  },
  WEBHOOK_GIVE_UP_HOURS: {
    read: (config) => config.webhooks.giveUpHours,
    default: 72,
    good: [
      ['1', 1],
      ['720', 720],
    ],
    bad: ['0', '721', 'soon'].map((value) => [
      value,
      integerError('WEBHOOK_GIVE_UP_HOURS', 'from 1 to 720', value),
    ]),
  },
  WEBHOOK_RETRY_SECONDS: {
    read: (config) => config.webhooks.retrySeconds,
    default: 10,
    good: [['1', 1]],
    bad: ['0', '3601'].map((value) => [
      value,
      integerError('WEBHOOK_RETRY_SECONDS', 'from 1 to 3600', value),
    ]),
  },
  WEBHOOK_TIMEOUT_SECONDS: {
    read: (config) => config.webhooks.timeoutSeconds,
    default: 10,
    good: [['30', 30]],
    bad: ['0', '121'].map((value) => [
      value,
      integerError('WEBHOOK_TIMEOUT_SECONDS', 'from 1 to 120', value),
    ]),
  },
  WEBHOOK_SEND_CONNECTIONS: {
    read: (config) => config.webhooks.sendConnections,
    default: 5,
    good: [['1', 1]],
    bad: ['0', '51'].map((value) => [value, integerError('WEBHOOK_SEND_CONNECTIONS', 'from 1 to 50', value)]),
  },
  SITE_CONFIG_FILE: {
    // whether the file exists and is valid is checked at start (test/server.test.ts)
    read: (config) => config.siteConfigFile,
    default: null,
    good: [
      ['site.yaml', 'site.yaml'],
      ['/etc/tessera/site.json', '/etc/tessera/site.json'],
    ],
    bad: [],
  },
}

/** Every case listens on a loopback address unless it says otherwise, so production needs no TLS files (R5.7.1). */
function load(name: string, variable: Variable, value: string | undefined, withVariables?: Env) {
  return loadConfig({ HOST: '127.0.0.1', ...(withVariables ?? variable.with), [name]: value })
}

function configError(run: () => unknown): ConfigError {
  try {
    run()
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error('expected a ConfigError')
}

describe.each(Object.entries(VARIABLES))('%s', (name, variable) => {
  it('has its default when unset, empty or blank', () => {
    for (const value of [undefined, '', '   ']) {
      expect(variable.read(load(name, variable, value))).toEqual(variable.default)
    }
  })

  if (variable.good.length > 0) {
    it.each(variable.good)('reads %j (trimmed)', (value, expected, withVariables) => {
      expect(variable.read(load(name, variable, value, withVariables))).toEqual(expected)
      expect(variable.read(load(name, variable, ` ${value}\t`, withVariables))).toEqual(expected)
    })
  }

  if (variable.bad.length > 0) {
    it.each(variable.bad)('refuses %j with one line naming the variable', (value, message, withVariables) => {
      const error = configError(() => load(name, variable, value, withVariables))
      expect(error.message).toBe(message)
      expect(error.variable).toBe(name)
      expect(error.code).toBe('config_invalid')
    })
  }

  if (variable.warnings !== undefined) {
    it.each(variable.warnings)('warns for %j: %j', (value, warnings, withVariables) => {
      expect(configWarnings(load(name, variable, value, withVariables))).toEqual(warnings)
    })
  }
})

describe('loadConfig', () => {
  it('reads every variable of src/config.ts and src/config/: the table above has a row for each', () => {
    const sources = [
      join(import.meta.dirname, '../src/config.ts'),
      ...readdirSync(join(import.meta.dirname, '../src/config'))
        // the development secret's file reads no variable (its 'EEXIST' is a file-system error code)
        .filter((file) => file !== 'dev-secret.ts')
        .map((file) => join(import.meta.dirname, '../src/config', file)),
    ]
    const names = new Set(
      sources.flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/'([A-Z][A-Z0-9_]+)'/g)].map(([, n]) => n),
      ),
    )
    // the names of AUTH_JWT_ALGORITHM's values are quoted too
    for (const algorithm of ACCESS_TOKEN_ALGORITHMS) names.delete(algorithm)
    // and the suffixes of OAUTH_<NAME>_CLIENT_ID and _CLIENT_SECRET, whose rows are OAUTH_PROVIDERS' (its `with`)
    for (const suffix of ['CLIENT_ID', 'CLIENT_SECRET']) names.delete(suffix)
    expect([...names].sort()).toEqual(Object.keys(VARIABLES).sort())
  })

  it('has the defaults of DECISIONS', () => {
    const config = loadConfig({})
    expect(config.env).toBe('development')
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: 3000, trustProxy: [], workers: 1 })
    expect(config.auth).toMatchObject({
      jwtSecret: null,
      previousJwtSecrets: [],
      accessTokenTtlSeconds: 15 * 60,
      refreshTokenTtlSeconds: 7 * 86_400,
      argon2: { memoryKiB: 19456, timeCost: 2, parallelism: 1 },
    })
    expect(config.storage).toMatchObject({
      dataDir: './data',
      databaseUrl: 'sqlite:./data/app.db',
      redisUrl: null,
      maxConnections: 10,
    })
    expect(config.http.corsOrigins).toBe('*')
    expect(config.logLevel).toBe('info')
    expect(config.siteConfigFile).toBeNull()
    // HS256 access tokens with no iss: the specification's tokens, byte for byte
    expect(config.signing).toEqual({
      algorithm: 'HS256',
      privateKeyFile: null,
      previousPublicKeyFiles: [],
      issuer: null,
    })
    expect(config.server.publicUrl).toBeNull()
    // one session per user, no grace, no detection, no sid in any token: the specification's behaviour
    expect(config.sessions).toEqual({
      mode: 'single',
      maxSessions: 10,
      reuseGraceSeconds: 0,
      reuseEndsSession: false,
      sidInAccessTokens: false,
      sidInRefreshTokens: false,
      lifetimeMs: null,
    })
  })

  it('reads every variable at once', () => {
    const config = loadConfig({
      ...PRODUCTION,
      AUTH_JWT_PREVIOUS_SECRETS: HEX_SECRET,
      AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES: '5',
      AUTH_REFRESH_TOKEN_EXPIRATION_DAYS: '30',
      AUTH_ARGON2_MEMORY_KIB: '65536',
      AUTH_ARGON2_TIME_COST: '3',
      AUTH_ARGON2_PARALLELISM: '2',
      AUTH_HASH_CONCURRENCY: '2',
      AUTH_HASH_QUEUE_LIMIT: '50',
      AUTH_LOGIN_BACKOFF_AFTER: '3',
      AUTH_LOGIN_BACKOFF_MAX_SECONDS: '600',
      AUTH_SESSIONS: 'per-device',
      AUTH_MAX_SESSIONS: '5',
      AUTH_REFRESH_REUSE_GRACE_SECONDS: '10',
      AUTH_REFRESH_REUSE_ENDS_SESSION: 'true',
      AUTH_SESSION_LIFETIME_DAYS: '90',
      AUTH_JWT_ALGORITHM: 'EdDSA',
      AUTH_JWT_PRIVATE_KEY_FILE: '/etc/tessera/jwt-key.pem',
      AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES: '/etc/tessera/jwt-old.pub.pem',
      AUTH_JWT_ISSUER: 'https://auth.example.com/api',
      PUBLIC_URL: 'https://auth.example.com/api',
      HOST: '127.0.0.1',
      PORT: '8080',
      TRUST_PROXY: '10.0.0.0/8',
      WORKERS: '3',
      REQUEST_TIMEOUT_MS: '20000',
      HEADERS_TIMEOUT_MS: '4000',
      TLS_CERT_FILE: '/etc/tessera/cert.pem',
      TLS_KEY_FILE: '/etc/tessera/key.pem',
      MAX_CONNECTIONS: '4000',
      MAX_CONNECTIONS_PER_ADDRESS: '100',
      WRITE_TIMEOUT_MS: '15000',
      METRICS_PORT: '9464',
      METRICS_HOST: '0.0.0.0',
      DATA_DIR: '/srv/tessera',
      DATABASE_URL: 'postgres://u@db/tessera',
      DATABASE_MAX_CONNECTIONS: '20',
      REDIS_URL: 'redis://cache:6379',
      REDIS_KEY_PREFIX: 'blue:',
      STORAGE_TIMEOUT_MS: '3000',
      AUDIT_RETENTION_DAYS: '30',
      CORS_ORIGINS: 'https://a.example, https://b.example:8443/',
      RATE_LIMIT_PER_MINUTE: '60',
      HEALTH_TIMEOUT_MS: '500',
      API_DOCS: 'true',
      DEMO_PAGE: 'true',
      ADMIN_CONSOLE: 'true',
      BASE_PATH: '/api',
      LOG_LEVEL: 'warn',
      SITE_CONFIG_FILE: 'site.yaml',
      SMTP_URL: 'smtps://mailer:secret@mail.example:465',
      MAIL_FROM: 'Docs <auth@example.com>',
      MAIL_PRODUCT_NAME: 'Docs',
      MAIL_TEMPLATES_DIR: '/etc/tessera/mail',
      MAIL_RETRY_SECONDS: '10',
      MAIL_SEND_TIMEOUT_SECONDS: '20',
      MAIL_SEND_CONNECTIONS: '8',
      EMAIL_CODE_TTL_SECONDS: '300',
      EMAIL_CODE_RESEND_SECONDS: '30',
      EMAIL_CODE_HOURLY_LIMIT: '5',
      AUTH_REGISTER_CODE: 'required',
      PASSWORD_RESET_URL: 'https://docs.example/reset#key={key}',
      MFA_ISSUER: 'Docs accounts',
      WEBAUTHN_RP_ID: 'example.com',
      ADMIN_ROLE: 'support-desk',
      ADMIN_REQUIRE_MFA: 'false',
      WEBHOOK_URLS: 'https://app.example/hooks/tessera',
      WEBHOOK_SECRET: WEBHOOK_SECRET_VALUE,
      WEBHOOK_PREVIOUS_SECRETS: PREVIOUS_WEBHOOK_SECRET,
      WEBHOOK_GIVE_UP_HOURS: '24',
      WEBHOOK_RETRY_SECONDS: '5',
      WEBHOOK_TIMEOUT_SECONDS: '3',
      WEBHOOK_SEND_CONNECTIONS: '2',
    })
    expect(config).toEqual({
      env: 'production',
      server: {
        host: '127.0.0.1',
        port: 8080,
        trustProxy: ['10.0.0.0/8'],
        workers: 3,
        requestTimeoutMs: 20_000,
        headersTimeoutMs: 4_000,
        bodyLimitBytes: 16 * 1024,
        tls: { certFile: '/etc/tessera/cert.pem', keyFile: '/etc/tessera/key.pem' },
        maxConnections: 4_000,
        maxConnectionsPerAddress: 100,
        writeTimeoutMs: 15_000,
        metrics: { host: '0.0.0.0', port: 9464 },
        publicUrl: 'https://auth.example.com/api',
      },
      auth: {
        jwtSecret: SECRET,
        previousJwtSecrets: [HEX_SECRET],
        accessTokenTtlSeconds: 300,
        refreshTokenTtlSeconds: 30 * 86_400,
        argon2: { memoryKiB: 65536, timeCost: 3, parallelism: 2 },
        hashConcurrency: 2,
        hashQueueLimit: 50,
        loginBackoff: { afterFailures: 3, maxDelaySeconds: 600 },
      },
      sessions: {
        mode: 'per-device',
        maxSessions: 5,
        reuseGraceSeconds: 10,
        reuseEndsSession: true,
        sidInAccessTokens: true,
        sidInRefreshTokens: true,
        lifetimeMs: 90 * 86_400_000,
      },
      signing: {
        algorithm: 'EdDSA',
        privateKeyFile: '/etc/tessera/jwt-key.pem',
        previousPublicKeyFiles: ['/etc/tessera/jwt-old.pub.pem'],
        issuer: 'https://auth.example.com/api',
      },
      storage: {
        dataDir: '/srv/tessera',
        databaseUrl: 'postgres://u@db/tessera',
        redisUrl: 'redis://cache:6379',
        redisKeyPrefix: 'blue:',
        maxConnections: 20,
        operationTimeoutMs: 3_000,
      },
      audit: { retentionDays: 30 },
      admin: { role: 'support-desk', requireMfa: false },
      mail: {
        smtpUrl: 'smtps://mailer:secret@mail.example:465',
        from: 'Docs <auth@example.com>',
        productName: 'Docs',
        templatesDir: '/etc/tessera/mail',
        retrySeconds: 10,
        sendTimeoutSeconds: 20,
        sendConnections: 8,
        available: true,
        passwordResetUrl: 'https://docs.example/reset#key={key}',
      },
      codes: { ttlSeconds: 300, resendSeconds: 30, hourlyLimit: 5, register: 'required' },
      http: {
        corsOrigins: ['https://a.example', 'https://b.example:8443'],
        rateLimitPerMinute: 60,
        healthTimeoutMs: 500,
        apiDocs: true,
        demoPage: true,
        adminConsole: true,
        basePath: '/api',
      },
      mfa: {
        issuer: 'Docs accounts',
        relyingParty: {
          id: 'example.com',
          name: 'Docs accounts',
          origins: ['https://auth.example.com'],
          anyLocalhostPort: false,
        },
        warnings: [],
      },
      providers: {
        enabled: [],
        frontendOrigin: 'https://auth.example.com',
        publicBaseUrl: 'https://auth.example.com/api',
      },
      webhooks: {
        urls: ['https://app.example/hooks/tessera'],
        secrets: [WEBHOOK_SECRET_VALUE, PREVIOUS_WEBHOOK_SECRET],
        giveUpHours: 24,
        retrySeconds: 5,
        timeoutSeconds: 3,
        sendConnections: 2,
      },
      logLevel: 'warn',
      siteConfigFile: 'site.yaml',
    })
  })

  it('AUTH_HASH_CONCURRENCY defaults to the cores, shared among the worker processes', () => {
    expect(loadConfig({}).auth.hashConcurrency).toBe(CORES)
    expect(loadConfig({ WORKERS: 'auto' }).auth.hashConcurrency).toBe(1)
    expect(loadConfig({ WORKERS: String(CORES * 4) }).auth.hashConcurrency).toBe(1)
    expect(loadConfig({ WORKERS: 'auto', AUTH_HASH_CONCURRENCY: '3' }).auth.hashConcurrency).toBe(3)
  })

  it('is frozen', () => {
    const config = loadConfig({})
    expect(Object.isFrozen(config)).toBe(true)
    expect(Object.isFrozen(config.auth.argon2)).toBe(true)
    expect(Object.isFrozen(config.server.trustProxy)).toBe(true)
  })

  it('echoes no credential at start: a URL in a bad value is quoted with its user name and password masked', () => {
    const production = { NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET }
    const message = (env: Record<string, string>) =>
      configError(() => loadConfig({ ...production, ...env })).message
    expect(message({ CORS_ORIGINS: 'https://user:secret@x.example' })).toBe(
      'CORS_ORIGINS must list origins such as https://app.example.com, got "https://***@x.example"',
    )
    expect(message({ CORS_ORIGINS: 'https://a.example, http://admin:hunter22@b.example' })).toBe(
      'CORS_ORIGINS must list origins such as https://app.example.com, got "http://***@b.example"',
    )
    expect(message({ BASE_PATH: 'https://user:secret@x.example/api' })).not.toContain('secret')
    expect(message({ WORKERS: 'redis://:secret@cache:6379' })).not.toContain('secret')
  })

  it('echoes a bad value as one visible, bounded line: control characters escaped, a long value cut', () => {
    const error = configError(() =>
      loadConfig({ LOG_LEVEL: `\u001b[2J\u001b[31mred\nforged line\u202e${'x'.repeat(100_000)}` }),
    )
    expect(error.message).toMatch(
      /^LOG_LEVEL must be one of [^\n]+, got "\\x1b\[2J\\x1b\[31mred\\nforged line\\u202ex+"… \(\d+ more characters\)$/,
    )
    expect(error.message.length).toBeLessThan(300)
  })

  it('names the first bad variable, section by section', () => {
    expect(configError(() => loadConfig({ PORT: 'x', REDIS_URL: 'x', LOG_LEVEL: 'x' })).variable).toBe('PORT')
    expect(configError(() => loadConfig({ REDIS_URL: 'x', LOG_LEVEL: 'x' })).variable).toBe('REDIS_URL')
  })
})

describe('the relying party of passkeys (docs/api.md §4.26)', () => {
  const relyingParty = (env: Env) => loadConfig({ HOST: '127.0.0.1', ...env }).mfa.relyingParty

  it('outside production with no origin set: localhost, on any port', () => {
    const expected = { id: 'localhost', name: 'Tessera', origins: [], anyLocalhostPort: true }
    expect(relyingParty({})).toEqual(expected)
    expect(relyingParty({ NODE_ENV: 'test', PORT: '0', MFA_ISSUER: 'Acme' })).toEqual({
      ...expected,
      name: 'Acme',
    })
    expect(relyingParty({ WEBAUTHN_RP_ID: 'localhost' })).toEqual(expected)
    expect(configError(() => relyingParty({ WEBAUTHN_RP_ID: 'example.com' })).message).toBe(
      "WEBAUTHN_RP_ID is example.com, but neither FRONTEND_ORIGIN nor PUBLIC_URL is set: the origins would be http://localhost's, which only the RP ID localhost covers",
    )
  })

  it('PUBLIC_URL alone: its host and origin; FRONTEND_ORIGIN alone: its', () => {
    expect(relyingParty({ PUBLIC_URL: 'https://auth.example.com/api' })).toEqual({
      id: 'auth.example.com',
      name: 'Tessera',
      origins: ['https://auth.example.com'],
      anyLocalhostPort: false,
    })
    expect(relyingParty({ ...PRODUCTION, FRONTEND_ORIGIN: 'https://app.example.com:8443' })).toEqual({
      id: 'app.example.com',
      name: 'Tessera',
      origins: ['https://app.example.com:8443'],
      anyLocalhostPort: false,
    })
  })

  it('production without an origin has no relying party, and says nothing unless WEBAUTHN_RP_ID asks for one', () => {
    expect(relyingParty(PRODUCTION)).toBeNull()
    expect(configWarnings(loadConfig(PRODUCTION))).toEqual([])
    expect(configError(() => relyingParty({ ...PRODUCTION, WEBAUTHN_RP_ID: 'example.com' })).message).toBe(
      'WEBAUTHN_RP_ID is set, but neither FRONTEND_ORIGIN nor PUBLIC_URL is: passkeys would have no origin to come from',
    )
  })

  it('a default host that is an IP address: no relying party, and a warning', () => {
    const config = loadConfig({ HOST: '127.0.0.1', FRONTEND_ORIGIN: 'http://127.0.0.1:5173' })
    expect(config.mfa.relyingParty).toBeNull()
    expect(configWarnings(config)).toEqual([
      'passkeys are off: the relying party would be 127.0.0.1, an IP address, which no browser takes; set WEBAUTHN_RP_ID',
    ])
  })
})

describe('configWarnings', () => {
  it('is empty for the defaults, in development and in production', () => {
    expect(configWarnings(loadConfig({}))).toEqual([])
    expect(configWarnings(loadConfig({ AUTH_JWT_SECRET: SECRET }))).toEqual([])
    expect(configWarnings(loadConfig(PRODUCTION))).toEqual([])
  })

  it('lists every warning, in the order the server logs them', () => {
    const warnings = configWarnings(
      loadConfig({
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        AUTH_JWT_SECRET: SECRET,
        AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES: '60',
        AUTH_REFRESH_TOKEN_EXPIRATION_DAYS: '1',
        AUTH_ARGON2_MEMORY_KIB: '1024',
      }),
    )
    expect(warnings).toEqual([
      'AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES is 60; the recommended range is 5 to 30',
      'AUTH_REFRESH_TOKEN_EXPIRATION_DAYS is 1; the recommended range is 7 to 30',
      'AUTH_ARGON2_MEMORY_KIB=1024 with AUTH_ARGON2_TIME_COST=2 is below the OWASP minimum (19456 KiB, t=2)',
      'CORS_ORIGINS is empty: browsers on other origins cannot call the service',
    ])
  })
})
