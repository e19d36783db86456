import { availableParallelism } from 'node:os'
import { describe, expect, it } from 'vitest'
import { ConfigError, configWarnings, loadConfig } from '../src/config.js'

const SECRET = 'x'.repeat(32)

describe('loadConfig', () => {
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
  })

  it('reads every variable', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: SECRET,
      AUTH_JWT_PREVIOUS_SECRETS: 'old-one, old-two',
      AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES: '5',
      AUTH_REFRESH_TOKEN_EXPIRATION_DAYS: '30',
      AUTH_ARGON2_MEMORY_KIB: '65536',
      AUTH_ARGON2_TIME_COST: '3',
      AUTH_ARGON2_PARALLELISM: '2',
      HOST: '127.0.0.1',
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db/tessera',
      REDIS_URL: 'redis://cache:6379',
      TRUST_PROXY: '10.0.0.0/8, 192.168.1.1, ::1, loopback',
      LOG_LEVEL: 'warn',
      CORS_ORIGINS: 'https://a.example, https://b.example:8443/',
      WORKERS: '3',
      DATABASE_MAX_CONNECTIONS: '20',
    })
    expect(config.auth.previousJwtSecrets).toEqual(['old-one', 'old-two'])
    expect(config.auth.accessTokenTtlSeconds).toBe(300)
    expect(config.auth.refreshTokenTtlSeconds).toBe(30 * 86_400)
    expect(config.auth.argon2).toEqual({ memoryKiB: 65536, timeCost: 3, parallelism: 2 })
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080, workers: 3 })
    expect(config.server.trustProxy).toEqual(['10.0.0.0/8', '192.168.1.1', '::1', 'loopback'])
    expect(config.storage).toMatchObject({
      databaseUrl: 'postgres://u@db/tessera',
      redisUrl: 'redis://cache:6379',
      maxConnections: 20,
    })
    expect(config.http.corsOrigins).toEqual(['https://a.example', 'https://b.example:8443'])
    expect(config.logLevel).toBe('warn')
  })

  it('WORKERS=auto is the number of cores', () => {
    expect(loadConfig({ WORKERS: 'auto' }).server.workers).toBe(availableParallelism())
  })

  it('AUTH_HASH_CONCURRENCY defaults to the cores, shared among the worker processes', () => {
    const cores = availableParallelism()
    expect(loadConfig({}).auth.hashConcurrency).toBe(cores)
    expect(loadConfig({ WORKERS: 'auto' }).auth.hashConcurrency).toBe(1)
    expect(loadConfig({ WORKERS: String(cores * 4) }).auth.hashConcurrency).toBe(1)
    expect(loadConfig({ WORKERS: 'auto', AUTH_HASH_CONCURRENCY: '3' }).auth.hashConcurrency).toBe(3)
  })

  it('is frozen', () => {
    const config = loadConfig({})
    expect(Object.isFrozen(config)).toBe(true)
    expect(Object.isFrozen(config.auth.argon2)).toBe(true)
  })

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES', '0'],
    ['AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES', '-5'],
    ['AUTH_REFRESH_TOKEN_EXPIRATION_DAYS', 'seven'],
    ['AUTH_ARGON2_MEMORY_KIB', '1e6'],
    ['AUTH_ARGON2_TIME_COST', '0'],
    ['AUTH_ARGON2_PARALLELISM', '0'],
    ['DATABASE_URL', 'ftp://db/tessera'],
    ['DATABASE_URL', 'not a url'],
    ['DATABASE_URL', 'sqlite:'],
    ['REDIS_URL', 'http://cache:6379'],
    ['TRUST_PROXY', 'proxy.example.com'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['LOG_LEVEL', 'verbose'],
    ['NODE_ENV', 'staging'],
    ['WORKERS', '0'],
    ['WORKERS', 'many'],
    ['DATABASE_MAX_CONNECTIONS', '0'],
  ])('%s=%s stops the start with an error naming the variable', (variable, value) => {
    let error: unknown
    try {
      loadConfig({ [variable]: value })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe(variable)
    expect((error as ConfigError).message.startsWith(variable)).toBe(true)
    expect((error as ConfigError).message).not.toContain('\n')
  })

  it('production refuses a missing or short AUTH_JWT_SECRET', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/^AUTH_JWT_SECRET must be set/)
    expect(() => loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(31) })).toThrow(ConfigError)
    expect(loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET }).auth.jwtSecret).toBe(SECRET)
  })

  it('production takes CORS origins from CORS_ORIGINS and refuses a value that is not an origin', () => {
    expect(loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET }).http.corsOrigins).toEqual([])
    expect(() =>
      loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET, CORS_ORIGINS: 'https://a.example/path' }),
    ).toThrow(/^CORS_ORIGINS/)
  })

  it('DATA_DIR moves the default SQLite file', () => {
    expect(loadConfig({ DATA_DIR: '/var/lib/tessera/' }).storage.databaseUrl).toBe(
      'sqlite:/var/lib/tessera/app.db',
    )
  })
})

describe('configWarnings', () => {
  it('is empty for the defaults', () => {
    expect(configWarnings(loadConfig({ AUTH_JWT_SECRET: SECRET }))).toEqual([])
  })

  it('warns for lifetimes outside the recommended ranges', () => {
    const warnings = configWarnings(
      loadConfig({ AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES: '60', AUTH_REFRESH_TOKEN_EXPIRATION_DAYS: '1' }),
    )
    expect(warnings).toEqual([
      'AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES is 60; the recommended range is 5 to 30',
      'AUTH_REFRESH_TOKEN_EXPIRATION_DAYS is 1; the recommended range is 7 to 30',
    ])
  })

  it('warns in production for Argon2 below every OWASP setting, not for an equivalent one', () => {
    const production = {
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: SECRET,
      CORS_ORIGINS: 'https://app.example',
    }
    expect(configWarnings(loadConfig({ ...production, AUTH_ARGON2_MEMORY_KIB: '1024' }))).toEqual([
      expect.stringMatching(
        /^AUTH_ARGON2_MEMORY_KIB=1024 with AUTH_ARGON2_TIME_COST=2 is below the OWASP minimum/,
      ),
    ])
    const owaspRow = { ...production, AUTH_ARGON2_MEMORY_KIB: '12288', AUTH_ARGON2_TIME_COST: '3' }
    expect(configWarnings(loadConfig(owaspRow))).toEqual([])
  })

  it('warns for a short secret outside production', () => {
    expect(configWarnings(loadConfig({ AUTH_JWT_SECRET: 'short' }))).toEqual([
      'AUTH_JWT_SECRET is shorter than 32 characters; production refuses it',
    ])
  })
})
