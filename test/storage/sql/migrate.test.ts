import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { systemClock } from '../../../src/clock.js'
import { type Config, loadConfig } from '../../../src/config.js'
import { copyStore } from '../../../src/storage/copy/copy-store.js'
import { newUserRecord } from '../../../src/storage/new-user.js'
import { migrateDatabase, openDatabase, openStores } from '../../../src/storage/open-stores.js'
import { readMigrations, splitStatements } from '../../../src/storage/sql/migrate.js'
import type { SqlDatabase } from '../../../src/storage/sql/sql-database.js'
import type { EmailCodeStore } from '../../../src/storage/stores.js'
import { type BackendInstance, backends } from '../../support/backends.js'

describe('splitStatements', () => {
  it('splits on semicolons at line ends and drops comment-only chunks', () => {
    const text =
      '-- a comment\nCREATE TABLE a (x INT);\n\n-- another\nCREATE INDEX i ON a (x);\n-- trailing\n'
    expect(splitStatements(text)).toEqual([
      '-- a comment\nCREATE TABLE a (x INT)',
      '-- another\nCREATE INDEX i ON a (x)',
    ])
  })

  it('keeps a semicolon inside a line', () => {
    expect(splitStatements("INSERT INTO t VALUES ('a;b');")).toEqual(["INSERT INTO t VALUES ('a;b')"])
  })
})

describe('readMigrations', () => {
  it('reads numbered files in order for every dialect, the same numbers for each', () => {
    const [sqlite, postgres, mysql] = (['sqlite', 'postgres', 'mysql'] as const).map(readMigrations)
    const versions = sqlite?.map((migration) => migration.version) ?? []
    expect(versions).toEqual(versions.map((_, i) => i + 1))
    expect(postgres?.map((migration) => migration.version)).toEqual(versions)
    expect(mysql?.map((migration) => migration.version)).toEqual(versions)
    expect(sqlite?.[0]?.statements.length).toBeGreaterThan(0)
  })
})

describe.each(backends)('migrate [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  it('applies every migration once; a second run applies nothing', async () => {
    const storage = loadConfig(instance.env).storage
    const first = await migrateDatabase(storage, systemClock)
    expect(first.length).toBeGreaterThan(0)
    expect(await migrateDatabase(storage, systemClock)).toEqual([])
  })

  it('instances starting at once wait for the lock: each migration is applied exactly once', async () => {
    const storage = loadConfig(instance.env).storage
    const runs = await Promise.all(Array.from({ length: 4 }, () => migrateDatabase(storage, systemClock)))
    const applied = runs.flat()
    expect(new Set(applied).size).toBe(applied.length)
    expect(runs.filter((run) => run.length > 0)).toHaveLength(1)
  })
})

/** The store of `storage` as version `version` left it (its migrations applied and recorded), open. */
async function openAtVersion(storage: Config['storage'], version: number): Promise<SqlDatabase> {
  const database = await openDatabase(storage, { warn() {}, info() {} })
  await sql`CREATE TABLE schema_migrations (
    version INTEGER NOT NULL PRIMARY KEY,
    name VARCHAR(255) NOT NULL,
    applied_at VARCHAR(32) NOT NULL
  )`.execute(database.db)
  for (const migration of readMigrations(database.engine).filter((m) => m.version <= version)) {
    for (const statement of migration.statements) await sql.raw(statement).execute(database.db)
    await sql`INSERT INTO schema_migrations (version, name, applied_at)
      VALUES (${migration.version}, ${migration.name}, ${new Date().toISOString()})`.execute(database.db)
  }
  return database
}

/**
 * Migration 0004 turns the one refresh token per user of 0001 into sessions: a store of version 3 holding tokens
 * starts (and migrates) with each token a session that refreshes once.
 */
describe.each(backends.filter((backend) => !backend.redis))('migration 0004 [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  it('each stored refresh token becomes a session of its user that rotates once; the old table is gone', async () => {
    const storage = loadConfig(instance.env).storage
    const now = Date.now()
    const users = ['1000000001', '1000000002', '1000000003']
    const digest = (n: number) => n.toString(16).padStart(64, '0')
    // the store as version 3 left it, as `migrate` would have recorded it
    const database = await openAtVersion(storage, 3)
    try {
      for (const [index, id] of users.entries()) {
        await sql`INSERT INTO users (id, email, password_hash, created_at)
          VALUES (${id}, ${`user${index}@example.com`}, ${'$argon2id$x'}, ${new Date(now).toISOString()})`.execute(
          database.db,
        )
      }
      // the third user's token has expired
      const expiries = [now + 3_600_000, now + 7_200_000, now - 1]
      for (const [index, id] of users.entries()) {
        await sql`INSERT INTO refresh_tokens (user_id, token_digest, expires_at)
          VALUES (${id}, ${digest(index)}, ${expiries[index]})`.execute(database.db)
      }
    } finally {
      await database.close()
    }

    const stores = await openStores(storage, systemClock)
    try {
      const [first, second] = [
        await stores.sessions.list('1000000001', now),
        await stores.sessions.list('1000000002', now),
      ]
      expect(first).toEqual([
        {
          id: expect.stringMatching(/^[0-9a-f]{32}$/),
          userId: '1000000001',
          digest: digest(0),
          expiresAt: now + 3_600_000,
          createdAt: expect.any(Number),
          lastUsedAt: expect.any(Number),
          device: '',
          clientAddress: null,
          previousDigest: null,
          rotatedAt: null,
          secondFactor: false,
        },
      ])
      // started when the migration ran, by the database's clock (this machine's)
      const migratedAt = first[0]?.createdAt ?? 0
      expect(Math.abs(migratedAt - Date.now())).toBeLessThan(60_000)
      expect(first[0]?.lastUsedAt).toBe(migratedAt)
      expect(second[0]?.id).not.toBe(first[0]?.id)
      expect(await stores.sessions.list('1000000003', now)).toEqual([])

      const rotation = {
        digest: digest(10),
        expiresAt: now + 3_600_000,
        clientAddress: null,
        lifetimeMs: null,
      }
      expect(await stores.sessions.rotate('1000000001', digest(0), rotation, now)).toBe(true)
      expect(
        await stores.sessions.rotate('1000000001', digest(0), { ...rotation, digest: digest(11) }, now),
      ).toBe(false)
      // a session of the single slot: the next login in single mode replaces it
      const login = {
        ...(first[0] as NonNullable<(typeof first)[0]>),
        id: 'a'.repeat(32),
        digest: digest(12),
      }
      expect(await stores.sessions.start(login, 'single', now)).toBe(true)
      expect(await stores.sessions.list('1000000001', now)).toEqual([login])
      expect(await stores.sessions.rotate('1000000002', digest(1), rotation, now)).toBe(true)
    } finally {
      await stores.close()
    }
    const migrated = await openDatabase(storage, { warn() {}, info() {} })
    try {
      const tables = (await migrated.db.introspection.getTables()).map((table) => table.name)
      expect(tables).toContain('sessions')
      expect(tables).not.toContain('refresh_tokens')
    } finally {
      await migrated.close()
    }
  })
})

/**
 * Migration 0005 adds e-mail verification, the codes, the outbox and the shared counters to a store of version 4:
 * its accounts start unverified, each with its password, and the new stores work at once.
 */
describe.each(backends.filter((backend) => !backend.redis))('migration 0005 [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  it('the accounts become unverified with their passwords intact; codes, outbox and counters work', async () => {
    const storage = loadConfig(instance.env).storage
    const now = Date.now()
    const accounts = [
      { id: '1000000001', email: 'first@example.com', hash: '$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$Zmlyc3Q' },
      { id: '1000000002', email: "o'neil@example.com", hash: `$argon2id$${'y'.repeat(300)}` },
    ]
    const database = await openAtVersion(storage, 4)
    try {
      for (const { id, email, hash } of accounts) {
        await sql`INSERT INTO users (id, email, password_hash, created_at)
          VALUES (${id}, ${email}, ${hash}, ${new Date(now).toISOString()})`.execute(database.db)
      }
    } finally {
      await database.close()
    }

    const stores = await openStores(storage, systemClock)
    try {
      for (const { id, email, hash } of accounts) {
        const expected = newUserRecord({
          id,
          email,
          passwordHash: hash,
          emailVerified: false,
          createdAt: new Date(now).toISOString(),
        })
        expect(await stores.users.findById(id)).toEqual(expected)
        expect(await stores.users.findByEmail(email)).toEqual(expected)
      }
      expect(await stores.users.claimAddress('1000000001')).toBe(true)
      expect(await stores.users.findById('1000000001')).toMatchObject({
        passwordHash: null,
        emailVerified: true,
      })

      const key = { address: 'first@example.com', purpose: 'login' as const, userId: null }
      await stores.codes.put(key, 'a'.repeat(64), now + 60_000, now)
      expect(await stores.codes.take(key, 'a'.repeat(64), now, 5)).toBe(true)
      const message = {
        id: 'b'.repeat(32),
        lane: 'mail' as const,
        userId: '1000000002',
        recipient: "o'neil@example.com",
        payload: 'p',
        codeExpiresAt: now + 600_000,
      }
      await stores.outbox.enqueue({ ...message, createdAt: now })
      expect(await stores.outbox.claim('mail', 'c'.repeat(32), now, now + 60_000, 10)).toEqual([
        { ...message, createdAt: now, attempts: 0, nextAttemptAt: now },
      ])
      expect((await stores.sharedCounters.increment('migrated', 60_000)).count).toBe(1)
    } finally {
      await stores.close()
    }
  })
})

/**
 * Migration 0006 adds the profile, role, status and updated_at to the accounts of a store of version 5, and the
 * avatars, provider links and tickets: each account reads back with no profile, as a `user`, active, last changed
 * when it was made, and the new stores work at once.
 */
describe.each(backends.filter((backend) => !backend.redis))('migration 0006 [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  it('the accounts get the defaults and keep what they had; profiles, avatars, links and tickets work', async () => {
    const storage = loadConfig(instance.env).storage
    const now = Date.now()
    const accounts = [
      { id: '1000000001', email: 'first@example.com', verified: true, at: new Date(now - 86_400_000) },
      { id: '1000000002', email: 'second@example.com', verified: false, at: new Date(now) },
    ]
    const database = await openAtVersion(storage, 5)
    try {
      for (const { id, email, verified, at } of accounts) {
        await sql`INSERT INTO users (id, email, password_hash, email_verified, created_at)
          VALUES (${id}, ${email}, ${'$argon2id$hash'}, ${database.engine === 'postgres' ? verified : Number(verified)},
            ${at.toISOString()})`.execute(database.db)
      }
    } finally {
      await database.close()
    }

    const stores = await openStores(storage, systemClock)
    try {
      const [first, second] = accounts.map(({ id, email, verified, at }) =>
        newUserRecord({
          id,
          email,
          passwordHash: '$argon2id$hash',
          emailVerified: verified,
          createdAt: at.toISOString(),
        }),
      )
      for (const expected of [first, second]) {
        expect(await stores.users.findById(expected?.id ?? '')).toEqual(expected)
        expect(await stores.users.findByEmail(expected?.email ?? '')).toEqual(expected)
      }
      const updatedAt = new Date(now + 1000).toISOString()
      const profile = { username: 'first', nickname: 'First', bio: null }
      expect(await stores.users.updateProfile('1000000001', profile, updatedAt)).toBe('updated')
      expect(await stores.users.updateProfile('1000000002', profile, updatedAt)).toBe('username_taken')
      const avatar = {
        id: 'a'.repeat(32),
        userId: '1000000002',
        contentType: 'image/png' as const,
        data: Buffer.from([0, 1, 2]),
        createdAt: now,
      }
      expect(await stores.avatars.put(avatar)).toBe(true)
      const link = { provider: 'github', subject: '42', userId: '1000000001', email: null, createdAt: now }
      expect(await stores.providerLinks.link(link)).toBe('linked')
      expect(await stores.users.list({ limit: 10 })).toEqual([
        { ...first, ...profile, updatedAt, providers: ['github'] },
        { ...second, avatarId: avatar.id },
      ])
      await stores.tickets.put({
        digest: 'd'.repeat(64),
        kind: 'oauth_state',
        payload: 'p',
        expiresAt: now + 60_000,
      })
      expect(await stores.tickets.take('d'.repeat(64), 'oauth_state', now)).toBe('p')
    } finally {
      await stores.close()
    }
  })
})

/**
 * Migration 0007 makes the one code per key of 0005 the first of a list of codes per key: a code stored before it
 * works after it as it did, with the tries it had used, and its key then takes more codes beside it.
 */
describe.each(backends.filter((backend) => !backend.redis))('migration 0007 [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  const digest = (seed: string) => seed.repeat(64)
  const key = (address: string, userId: string | null = null) =>
    ({ address, purpose: 'login' as const, userId }) as const

  /** The store at version 6 with one code per key, as that version stores them: one fresh, one tried, one expired. */
  async function storeOfVersion6(now: number) {
    const database = await openAtVersion(loadConfig(instance.env).storage, 6)
    try {
      const rows = [
        ['fresh@example.com', 'login', '', digest('a'), now + 60_000, 0],
        ['tried@example.com', 'login', '', digest('b'), now + 60_000, 4],
        ['expired@example.com', 'login', '', digest('c'), now - 1, 0],
        ['mine@example.com', 'login', '1000000001', digest('d'), now + 60_000, 0],
      ] as const
      for (const [address, purpose, userId, codeDigest, expiresAt, tries] of rows) {
        await sql`INSERT INTO email_codes (address, purpose, user_id, code_digest, expires_at, tries)
          VALUES (${address}, ${purpose}, ${userId}, ${codeDigest}, ${expiresAt}, ${tries})`.execute(
          database.db,
        )
      }
    } finally {
      await database.close()
    }
  }

  /** What a store holds of storeOfVersion6's codes, checked through its EmailCodeStore (using them up). */
  async function expectCodesOfVersion6(codes: EmailCodeStore, now: number) {
    // a code of before, and a second one beside it: both good
    await codes.put(key('fresh@example.com'), digest('e'), now + 60_000, now)
    expect(await codes.take(key('fresh@example.com'), digest('a'), now, 5)).toBe(true)
    expect(await codes.take(key('fresh@example.com'), digest('e'), now, 5)).toBe(false)
    // four tries used before: one wrong one leaves none
    expect(await codes.take(key('tried@example.com'), digest('f'), now, 5)).toBe(false)
    expect(await codes.take(key('tried@example.com'), digest('b'), now, 5)).toBe(false)
    expect(await codes.take(key('expired@example.com'), digest('c'), now, 5)).toBe(false)
    expect(await codes.take(key('mine@example.com'), digest('d'), now, 5)).toBe(false)
    expect(await codes.take(key('mine@example.com', '1000000001'), digest('d'), now, 5)).toBe(true)
  }

  it('R4.14.2 each stored code keeps its expiry and tries, and is one of its key from then on', async () => {
    const now = Date.now()
    await storeOfVersion6(now)
    const stores = await openStores(loadConfig(instance.env).storage, systemClock)
    try {
      await expectCodesOfVersion6(stores.codes, now)
      // the expired one's key is pruned, the others were used up
      expect(await stores.codes.prune(now)).toBe(1)
    } finally {
      await stores.close()
    }
  })

  it('R4.14.2 tessera store copy reads a store of version 6 as keys of one code each', async () => {
    const now = Date.now()
    await storeOfVersion6(now)
    const target = `sqlite:${instance.env.DATA_DIR}/copy.db`
    const progress = { start() {}, update() {}, stop() {} }
    const report = await copyStore(
      {
        from: instance.env.DATABASE_URL as string,
        to: target,
        redisFrom: null,
        redisTo: null,
        redisKeyPrefix: '',
        batchSize: 2,
        resume: false,
        force: false,
        clock: systemClock,
      },
      progress,
    )
    expect(report.mismatch).toBeNull()
    expect(report.emailCodes).toMatchObject({ copied: 3, source: { count: 3 } })
    expect(report.emailCodes?.target).toEqual(report.emailCodes?.source)
    const copied = await openStores(
      loadConfig({ ...instance.env, DATABASE_URL: target }).storage,
      systemClock,
    )
    try {
      await expectCodesOfVersion6(copied.codes, now)
    } finally {
      await copied.close()
    }
  })
})

/**
 * Migration 0008 gives the outbox the expiry of the code a message carries (its claim order, docs/api.md R6.4.2):
 * the messages queued before it wait on as messages that are not codes, delivered first, and the new ones are
 * claimed in the new order at once.
 */
describe.each(backends.filter((backend) => !backend.redis))('migration 0008 [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  it('the messages queued before it are claimed first, as no codes; new codes the newest first', async () => {
    const storage = loadConfig(instance.env).storage
    const now = Date.now()
    const database = await openAtVersion(storage, 7)
    try {
      await sql`INSERT INTO outbox (id, user_id, recipient, payload, created_at, attempts, next_attempt_at)
        VALUES (${'e'.repeat(32)}, ${null}, ${'before@example.com'}, ${'v1.before'}, ${now - 60_000}, ${2},
          ${now - 1_000})`.execute(database.db)
    } finally {
      await database.close()
    }

    const stores = await openStores(storage, systemClock)
    try {
      const queue = (id: string, createdAt: number, codeExpiresAt: number | null) =>
        stores.outbox.enqueue({
          id: id.repeat(32),
          lane: 'mail',
          userId: null,
          recipient: `${id}@example.com`,
          payload: 'v1.after',
          createdAt,
          codeExpiresAt,
        })
      await queue('a', now - 500, now + 599_500)
      await queue('b', now, now + 600_000)
      const claimed = await stores.outbox.claim('mail', 'c'.repeat(32), now, now + 15_000, 10)
      expect(claimed.map(({ id, codeExpiresAt, attempts }) => [id[0], codeExpiresAt, attempts])).toEqual([
        ['e', null, 2],
        ['b', now + 600_000, 0],
        ['a', now + 599_500, 0],
      ])
    } finally {
      await stores.close()
    }
  })
})

/**
 * Migration 0009 adds the second factors, the recovery codes and the service keys (issue 32): the accounts of a store
 * of version 8 take factors and codes at once, and an account's deletion removes its own.
 */
describe.each(backends.filter((backend) => !backend.redis))('migration 0009 [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  it("the accounts take factors and codes; a service key is kept; an account's deletion removes its own", async () => {
    const storage = loadConfig(instance.env).storage
    const now = Date.now()
    const database = await openAtVersion(storage, 8)
    try {
      for (const id of ['1000000001', '1000000002']) {
        await sql`INSERT INTO users (id, email, password_hash, created_at, updated_at)
          VALUES (${id}, ${`${id}@example.com`}, ${'$argon2id$hash'}, ${new Date(now).toISOString()},
            ${new Date(now).toISOString()})`.execute(database.db)
      }
    } finally {
      await database.close()
    }

    const stores = await openStores(storage, systemClock)
    try {
      const passkey = (userId: string, id: string) => ({
        id: id.repeat(32),
        userId,
        type: 'passkey' as const,
        name: 'Phone',
        confirmed: true,
        secret: null,
        lastStep: null,
        credentialId: `credential-${id}`,
        publicKey: 'pQECAyYgASFYIA',
        counter: 0,
        backedUp: true,
        transports: ['hybrid'],
        createdAt: now,
        lastUsedAt: null,
      })
      for (const [userId, id] of [
        ['1000000001', 'a'],
        ['1000000002', 'b'],
      ] as const) {
        expect(await stores.factors.add(passkey(userId, id))).toBe('added')
        await stores.factors.replaceRecoveryCodes(userId, [id.repeat(64)])
      }
      expect(await stores.serviceKeys.putIfAbsent('totp_seal', 'v1.sealed')).toBe('v1.sealed')
      expect(await stores.users.delete('1000000001')).toBe(true)
      expect(await stores.factors.list('1000000001')).toEqual([])
      expect(await stores.factors.findPasskey('credential-a')).toBeNull()
      expect(await stores.factors.recoveryCodesLeft('1000000001')).toBe(0)
      expect(await stores.factors.list('1000000002')).toEqual([passkey('1000000002', 'b')])
      expect(await stores.factors.recoveryCodesLeft('1000000002')).toBe(1)
      expect(await stores.serviceKeys.get('totp_seal')).toBe('v1.sealed')
    } finally {
      await stores.close()
    }
  })

  it("the table's check refuses a factor whose columns are another kind's", async () => {
    const stores = await openStores(loadConfig(instance.env).storage, systemClock)
    try {
      const user = newUserRecord({
        id: '1000000003',
        email: 'shape@example.com',
        passwordHash: null,
        emailVerified: true,
        createdAt: new Date().toISOString(),
      })
      expect(await stores.users.create(user)).toBe('created')
      const totp = {
        id: 'c'.repeat(32),
        userId: user.id,
        type: 'totp' as const,
        name: 'Authenticator app',
        confirmed: false,
        secret: 'v1.sealed',
        lastStep: null,
        credentialId: null,
        publicKey: null,
        counter: 0,
        backedUp: false,
        transports: [],
        createdAt: Date.now(),
        lastUsedAt: null,
      }
      // a TOTP factor with a credential, a passkey without one: the table's check refuses both
      await expect(stores.factors.add({ ...totp, credentialId: 'x', publicKey: 'y' })).rejects.toThrow()
      await expect(
        stores.factors.add({ ...totp, id: 'd'.repeat(32), type: 'passkey', secret: null }),
      ).rejects.toThrow()
      expect(await stores.factors.list(user.id)).toEqual([])
    } finally {
      await stores.close()
    }
  })
})

/**
 * Migration 0010 gives each session its second-factor flag (StoredSession.secondFactor): the sessions stored before
 * it read as established without one, refresh as before, and can be marked.
 */
describe.each(backends.filter((backend) => !backend.redis))('migration 0010 [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  it('a session stored before it reads as without a second factor, keeps refreshing, and can be marked', async () => {
    const storage = loadConfig(instance.env).storage
    const now = Date.now()
    const [userId, id, digest] = ['1000000001', 'b'.repeat(32), 'c'.repeat(64)]
    const database = await openAtVersion(storage, 9)
    try {
      await sql`INSERT INTO users (id, email, password_hash, created_at, updated_at)
        VALUES (${userId}, ${'before@example.com'}, ${'$argon2id$x'}, ${new Date(now).toISOString()},
          ${new Date(now).toISOString()})`.execute(database.db)
      await sql`INSERT INTO sessions (id, user_id, slot, token_digest, expires_at, created_at, last_used_at, device)
        VALUES (${id}, ${userId}, ${'single'}, ${digest}, ${now + 3_600_000}, ${now - 60_000}, ${now - 60_000},
          ${'curl'})`.execute(database.db)
    } finally {
      await database.close()
    }

    const stores = await openStores(storage, systemClock)
    try {
      expect(await stores.sessions.find(userId, { id }, now)).toMatchObject({ digest, secondFactor: false })
      const rotation = {
        digest: 'd'.repeat(64),
        expiresAt: now + 3_600_000,
        clientAddress: null,
        lifetimeMs: null,
      }
      expect(await stores.sessions.rotate(userId, digest, rotation, now)).toBe(true)
      expect(await stores.sessions.markSecondFactor(userId, id, now)).toBe(true)
      expect(await stores.sessions.list(userId, now)).toEqual([
        expect.objectContaining({ id, digest: rotation.digest, previousDigest: digest, secondFactor: true }),
      ])
    } finally {
      await stores.close()
    }
  })
})

/**
 * Migration 0012 makes the outbox one delivery queue with lanes (docs/api.md R6.4.7) and adds the disabled webhook
 * URLs: the messages queued before it are mail, claimed in the mail lane as before, and events queue beside them.
 */
describe.each(backends.filter((backend) => !backend.redis))('migration 0012 [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  it('the mail queued before it stays mail, in its order; events queue and claim beside it; URLs can be disabled', async () => {
    const storage = loadConfig(instance.env).storage
    const now = Date.now()
    const database = await openAtVersion(storage, 10)
    try {
      for (const [id, codeExpiresAt] of [
        ['a', now + 600_000],
        ['b', null],
      ] as const) {
        await sql`INSERT INTO outbox (id, user_id, recipient, payload, created_at, next_attempt_at, code_expires_at)
          VALUES (${id.repeat(32)}, ${null}, ${`${id}@example.com`}, ${'v1.before'}, ${now - 1_000}, ${now - 1_000},
            ${codeExpiresAt})`.execute(database.db)
      }
    } finally {
      await database.close()
    }

    const stores = await openStores(storage, systemClock)
    try {
      const digest = 'd'.repeat(64)
      await stores.outbox.enqueue({
        id: 'e'.repeat(32),
        lane: 'webhook',
        userId: null,
        recipient: digest,
        payload: '{"type":"ping","timestamp":"2026-03-01T12:00:00.000Z","data":{}}',
        createdAt: now,
        codeExpiresAt: null,
      })
      const mail = await stores.outbox.claim('mail', 'c'.repeat(32), now, now + 15_000, 10)
      expect(mail.map(({ id, lane, codeExpiresAt }) => [id[0], lane, codeExpiresAt])).toEqual([
        ['b', 'mail', null],
        ['a', 'mail', now + 600_000],
      ])
      expect(await stores.outbox.claim('webhook', 'f'.repeat(32), now, now + 15_000, 10)).toEqual([
        expect.objectContaining({ id: 'e'.repeat(32), lane: 'webhook', recipient: digest, attempts: 0 }),
      ])
      expect(await stores.webhookUrls.disable(digest, now)).toBe(true)
      expect(await stores.webhookUrls.disabled()).toEqual([{ urlDigest: digest, disabledAt: now }])
    } finally {
      await stores.close()
    }
  })
})
