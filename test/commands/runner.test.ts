import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { CommandFailedError } from '../../src/commands/command-errors.js'
import { type OnStoresOptions, runOnStores } from '../../src/commands/runner.js'
import { type Env, loadConfig } from '../../src/config.js'
import { OperationFailedError } from '../../src/errors.js'
import { migrateDatabase, openDatabase } from '../../src/storage/open-stores.js'
import type { Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { useTempDir } from '../support/temp-dir.js'
import { TEST_ENV } from '../support/test-service.js'

const dir = useTempDir('command-runner')

/**
 * runOnStores as `tessera users` and `tessera audit` run it, on a SQLite store: the exit code, the one stderr line
 * and the stores closed, whatever `work` does.
 */
describe('runOnStores', () => {
  // the service (or tessera migrate) made the store these commands work on
  beforeAll(async () => {
    await migrateDatabase(
      loadConfig({ ...TEST_ENV, DATABASE_URL: `sqlite:${join(dir.path, 'app.db')}` }).storage,
      systemClock,
    )
  })

  const run = async (
    work: (stores: Stores) => Promise<void>,
    options: Partial<OnStoresOptions> = {},
    env: Env = {},
  ) => {
    let stderr = ''
    let closed = 0
    const code = await runOnStores(
      'demo',
      {
        stderr: (text) => {
          stderr += text
        },
        clock: systemClock,
        environment: async () => ({
          ...TEST_ENV,
          DATABASE_URL: `sqlite:${join(dir.path, 'app.db')}`,
          ...env,
        }),
      },
      { configFile: undefined, describeFailure: (error) => `described: ${error}`, ...options },
      async (stores) => {
        const close = stores.close.bind(stores)
        vi.spyOn(stores, 'close').mockImplementation(() => {
          closed++
          return close()
        })
        await work(stores)
      },
    )
    return { code, stderr, closed }
  }

  it('exit 0 after the work, the stores closed', async () => {
    const result = await run(async (stores) => {
      expect(await stores.users.findById('1000000001')).toBeNull()
    })
    expect(result).toEqual({ code: 0, stderr: '', closed: 1 })
  })

  it.each([
    ['a CommandFailedError', new CommandFailedError('no account\n  has that id')],
    ['an OperationFailedError of a layer below', new OperationFailedError('no account\n  has that id')],
  ])('%s: exit 1, its message on one line, the stores closed', async (_kind, failure) => {
    const result = await run(async () => {
      throw failure
    })
    expect(result).toEqual({ code: 1, stderr: 'tessera demo: no account has that id\n', closed: 1 })
  })

  it('any other error: exit 1, what describeFailure says of it, the stores closed', async () => {
    const result = await run(async () => {
      throw new Error('lost')
    })
    expect(result).toEqual({ code: 1, stderr: 'tessera demo: described: Error: lost\n', closed: 1 })
  })

  it('a bad variable: exit 1, the ConfigError naming it, nothing run', async () => {
    const work = vi.fn(async () => {})
    const result = await run(work, {}, { AUTH_ARGON2_TIME_COST: 'many' })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^tessera demo: AUTH_ARGON2_TIME_COST [^\n]+\n$/)
    expect(work).not.toHaveBeenCalled()
  })

  it('a mistyped store is refused, not created: a SQLite file that does not exist, and its directory, stay absent', async () => {
    const work = vi.fn(async () => {})
    const file = join(dir.path, 'nonexistent', 'dir', 'x.db')
    const result = await run(work, {}, { DATABASE_URL: `sqlite:${file}` })
    expect(result).toEqual({
      code: 1,
      stderr: `tessera demo: DATABASE_URL names no existing store: "${file}" does not exist (tessera serve or tessera migrate creates it)\n`,
      closed: 0,
    })
    expect(existsSync(join(dir.path, 'nonexistent'))).toBe(false)
    expect(work).not.toHaveBeenCalled()
  })

  it('a mistyped store is refused, not created: a database that holds no tables of the service stays empty', async () => {
    const work = vi.fn(async () => {})
    const file = await dir.file('empty.db', '')
    const result = await run(work, {}, { DATABASE_URL: `sqlite:${file}` })
    expect(result).toEqual({
      code: 1,
      stderr:
        'tessera demo: DATABASE_URL names no existing store: the database holds no tables of the service (tessera serve or tessera migrate creates them)\n',
      closed: 0,
    })
    expect(work).not.toHaveBeenCalled()
    expect(statSync(file).size).toBe(0)
  })

  it.each(backends.filter((backend) => backend.name === 'postgres' || backend.name === 'mysql'))(
    'a mistyped store is refused, not created: a server database the service never migrated [$name]',
    async (backend) => {
      const instance = await backend.setup()
      try {
        const work = vi.fn(async () => {})
        const result = await run(work, {}, { DATABASE_URL: instance.env.DATABASE_URL as string })
        expect(result).toEqual({
          code: 1,
          stderr:
            'tessera demo: DATABASE_URL names no existing store: the database holds no tables of the service (tessera serve or tessera migrate creates them)\n',
          closed: 0,
        })
        expect(work).not.toHaveBeenCalled()
        // nothing was created in it: no migration ran
        const database = await openDatabase(loadConfig({ ...TEST_ENV, ...instance.env }).storage, {
          warn() {},
          info() {},
        })
        try {
          expect(await database.db.introspection.getTables()).toEqual([])
        } finally {
          await database.close()
        }
      } finally {
        await instance.teardown()
      }
    },
  )

  it('opens the stores `storage` picks', async () => {
    const work = vi.fn(async () => {})
    const result = await run(work, {
      storage: (config) => ({ ...config.storage, databaseUrl: 'postgres://postgres@127.0.0.1:9/none' }),
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^tessera demo: DATABASE_URL could not be opened[^\n]*\n$/)
    expect(work).not.toHaveBeenCalled()
  })
})
