import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { copyForced, serversMissing, useCopyFiles } from './copy-harness.js'
import { type SeededStore, seedSqliteStore, undoMigration0006 } from './seed-accounts.js'

const ACCOUNTS = 40

const { dir, url, onSqlite, copyIntoNew, copyAgain, copyEarlier, expectEarlierKept, copyThroughServers } =
  useCopyFiles('store-copy-profiles')

type Row = Record<string, unknown>

/** What a copy of the SQLite store `name` must reproduce: every account's columns, avatar and provider link. */
function accountRows(name: string) {
  return onSqlite(name, (connection) => ({
    users: connection.prepare('SELECT * FROM users ORDER BY id').all(),
    avatars: (connection.prepare('SELECT * FROM avatars ORDER BY user_id').all() as Row[]).map((row) => ({
      ...row,
      // a digest of the image: a deep equality of megabytes would take the test's seconds
      data: createHash('sha256')
        .update(row.data as Buffer)
        .digest('hex'),
    })),
    links: connection.prepare('SELECT * FROM oauth_accounts ORDER BY provider, subject').all(),
  }))
}

/**
 * The profiles of a store in use (migration 0006): usernames, nicknames and bios of any text (tabs, newlines,
 * characters outside the BMP), roles and statuses, avatars of every size up to 1 MiB (bytes of every value), links
 * to several providers, and tickets, which are not copied.
 */
function addProfiles(name: string, seeded: SeededStore, now: number) {
  return onSqlite(name, (connection) => {
    const profile = connection.prepare(
      `UPDATE users SET username = ?, nickname = ?, bio = ?, role = ?, status = ?, updated_at = ? WHERE id = ?`,
    )
    seeded.ids.slice(0, 30).forEach((id, i) => {
      profile.run(
        i % 3 === 0 ? null : `user_${i}.name-${i}`,
        i % 4 === 0 ? null : `Nick\t${i} "é" 😀`,
        i % 5 === 0 ? null : `line one\nline two, ${'ß'.repeat(i * 10)}`,
        i % 7 === 0 ? 'admin' : 'user',
        i % 6 === 0 ? 'disabled' : 'active',
        new Date(now + i).toISOString(),
        id,
      )
    })
    const avatar = connection.prepare(
      'INSERT INTO avatars (user_id, id, content_type, data, created_at) VALUES (?, ?, ?, ?, ?)',
    )
    const types = ['image/png', 'image/jpeg', 'image/webp']
    for (let i = 0; i < 11; i++) {
      const size = i === 0 ? 1024 * 1024 : i % 3 === 0 ? 200_000 : 100 + i
      avatar.run(seeded.ids[i * 3], randomBytes(16).toString('hex'), types[i % 3], randomBytes(size), now - i)
    }
    const link = connection.prepare(
      'INSERT INTO oauth_accounts (provider, subject, user_id, email, created_at) VALUES (?, ?, ?, ?, ?)',
    )
    const providers = ['github', 'google', 'acme-sso']
    for (let i = 0; i < 20; i++) {
      for (const provider of providers.slice(0, (i % 3) + 1)) {
        link.run(
          provider,
          `${provider}-subject-${i}`,
          seeded.ids[i],
          i % 2 ? null : `linked-${i}@example.com`,
          now,
        )
      }
    }
    const ticket = connection.prepare(
      'INSERT INTO oauth_tickets (digest, kind, payload, expires_at) VALUES (?, ?, ?, ?)',
    )
    ticket.run('a'.repeat(64), 'oauth_state', 'sealed', now + 600_000)
    return {
      avatars: 11,
      links: (connection.prepare('SELECT COUNT(*) FROM oauth_accounts').pluck().get() as number) ?? 0,
    }
  })
}

describe('tessera store copy of the profiles, avatars and provider links (migration 0006)', () => {
  let seeded: SeededStore
  let expected: { avatars: number; links: number }

  beforeAll(async () => {
    seeded = await seedSqliteStore(join(dir.path, 'source.db'), ACCOUNTS, 10)
    expected = addProfiles('source.db', seeded, Date.now())
  })

  it('copies every account column, avatar and link, verified; the tickets stay behind', async () => {
    const report = await copyIntoNew('source.db', 'target.db', 'avatars', expected.avatars)
    expect(report.providerLinks).toMatchObject({ copied: expected.links, source: { count: expected.links } })
    expect(report.providerLinks.target).toEqual(report.providerLinks.source)
    expect(accountRows('target.db')).toEqual(accountRows('source.db'))
    onSqlite('target.db', (connection) =>
      expect(connection.prepare('SELECT COUNT(*) FROM oauth_tickets').pluck().get()).toBe(0),
    )
  })

  it('--force leaves the rows there as they are, and fails verification when an image or a profile differs', async () => {
    const again = await copyAgain('source.db', 'target.db')
    expect(again.report.avatars).toMatchObject({ copied: 0, source: { count: expected.avatars } })
    expect(again.report.providerLinks).toMatchObject({ copied: 0, source: { count: expected.links } })
    expect(again.report.mismatch).toBeNull()

    const force = () => copyForced(url('source.db'), url('target.db'))
    onSqlite('target.db', (connection) =>
      connection
        .prepare('UPDATE avatars SET data = ? WHERE user_id = ?')
        .run(Buffer.from('other'), seeded.ids[3]),
    )
    const image = await force()
    expect(image.code).toBe(1)
    expect(image.stderr).toMatch(
      /\ntessera store copy: verification failed: the target's avatars differ from the source's \(sha256 [0-9a-f]{12} against [0-9a-f]{12}\)\n$/,
    )

    const bioBefore = onSqlite('target.db', (connection) => {
      connection.prepare('DELETE FROM avatars WHERE user_id = ?').run(seeded.ids[3])
      const before = connection.prepare('SELECT bio FROM users WHERE id = ?').pluck().get(seeded.ids[1])
      connection.prepare("UPDATE users SET bio = 'changed' WHERE id = ?").run(seeded.ids[1])
      return before
    })
    // the avatar deleted on the target is copied again; the changed bio is left as it is, and found
    const bio = await force()
    expect(bio.code).toBe(1)
    expect(bio.stderr).toMatch(/verification failed: the target's accounts differ from the source's/)

    onSqlite('target.db', (connection) => {
      connection.prepare('UPDATE users SET bio = ? WHERE id = ?').run(bioBefore, seeded.ids[1])
      connection
        .prepare("UPDATE oauth_accounts SET email = 'other@example.com' WHERE user_id = ?")
        .run(seeded.ids[0])
    })
    const link = await force()
    expect(link.code).toBe(1)
    expect(link.stderr).toMatch(/verification failed: the target's provider links differ from the source's/)
  })

  it('reads a store of a version before 0006 as accounts without profile, avatar or provider, and leaves it as it is', async () => {
    await copyEarlier('before-0006.db', 'after-0006.db', undoMigration0006, ['avatars', 'providerLinks'])
    onSqlite('after-0006.db', (connection) => {
      const users = connection.prepare('SELECT * FROM users').all() as Row[]
      expect(users).toHaveLength(20)
      for (const user of users) {
        expect(user).toMatchObject({
          username: null,
          nickname: null,
          bio: null,
          role: 'user',
          status: 'active',
          updated_at: user.created_at,
        })
      }
    })
    expectEarlierKept('before-0006.db', 5, 'username')
  })

  it.skipIf(serversMissing)(
    'SQLite to PostgreSQL to MariaDB and back to SQLite: every row as it was, every byte of every image',
    async () => {
      await copyThroughServers('source.db', 'back.db', (report) => {
        expect(report.accounts.target).toEqual(report.accounts.source)
        expect(report.avatars).toMatchObject({ copied: expected.avatars })
        expect(report.avatars.target).toEqual(report.avatars.source)
        expect(report.providerLinks).toMatchObject({ copied: expected.links })
        expect(report.providerLinks.target).toEqual(report.providerLinks.source)
      })
      expect(accountRows('back.db')).toEqual(accountRows('source.db'))
    },
    90_000,
  )
})
