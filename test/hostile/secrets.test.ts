import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { fetchJson } from '../support/fetch-json.js'
import { uniqueEmail } from '../support/http.js'
import { runCli, startProcess } from '../support/process.js'
import { startTestService, type TestService } from '../support/test-service.js'

// Issue 11, "Must refuse weak secrets and keep files private" (docs/api.md R5.5.3 to R5.5.5, R1.4).

const STRONG = 'kX3v9Qm2Lr8TzP1wYb6NcHs0Jd4Fg7Ea5Uo+Ri/Vt2Mq8Wn1Ky3Ze6Bx9Ca0Dp4Gh7S'
const PRODUCTION = { NODE_ENV: 'production', CORS_ORIGINS: 'https://app.example', HOST: '127.0.0.1' }

describe('hostile: weak secrets in production', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-secrets-'))
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it.each([
    [
      'AUTH_JWT_PREVIOUS_SECRETS=secret',
      { AUTH_JWT_SECRET: STRONG, AUTH_JWT_PREVIOUS_SECRETS: 'secret' },
      'AUTH_JWT_PREVIOUS_SECRETS entry 1',
    ],
    [
      'a weak second previous secret',
      {
        AUTH_JWT_SECRET: STRONG,
        AUTH_JWT_PREVIOUS_SECRETS: `${STRONG.slice(1)},hunter2hunter2hunter2hunter2hunter2`,
      },
      'AUTH_JWT_PREVIOUS_SECRETS entry 2',
    ],
    ['AUTH_JWT_SECRET of one repeated character', { AUTH_JWT_SECRET: 'a'.repeat(64) }, 'AUTH_JWT_SECRET'],
    ['AUTH_JWT_SECRET of 32 spaces', { AUTH_JWT_SECRET: ' '.repeat(32) }, 'AUTH_JWT_SECRET'],
  ])(
    'R5.5.3 production accepts weak secrets: %s stops the start with one line naming it, not its value',
    async (_case, env, named) => {
      const result = await runCli(['serve'], { ...PRODUCTION, DATA_DIR: dir, ...env })
      expect(result.code).toBe(1)
      const lines = result.stderr.trim().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(new RegExp(`^tessera: ${named} `))
      expect(result.stderr).not.toContain('hunter2')
      expect(result.stderr).not.toContain('aaaaaaaa')
      expect(result.stdout).toBe('')
    },
  )
})

describe('hostile: the SQLite files are created world-readable', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-modes-'))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it('R5.5.4 the data directory is 0700, app.db, -wal, -shm and the development secret 0600, after a start and writes', async () => {
    const dataDir = join(dir, 'data')
    const service = await startProcess({ DATA_DIR: dataDir, AUTH_JWT_SECRET: undefined, NODE_ENV: undefined })
    try {
      for (let i = 0; i < 3; i++) {
        const credentials = { email: uniqueEmail(), password: 'correct horse battery' }
        expect((await fetchJson(`${service.url}/auth/register`, { body: credentials })).status).toBe(200)
        expect((await fetchJson(`${service.url}/auth/login`, { body: credentials })).status).toBe(200)
      }
      const mode = async (name: string) => (await stat(join(dataDir, name))).mode & 0o777
      expect(await mode('.')).toBe(0o700)
      for (const name of ['app.db', 'app.db-wal', 'app.db-shm', 'jwt-secret']) {
        expect([name, await mode(name)]).toEqual([name, 0o600])
      }
    } finally {
      expect(await service.stop()).toBe(0)
    }
  })
})

describe('hostile: a password that arrives as invalid UTF-8', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
  })
  afterAll(() => service.close())

  const post = (url: string, email: string, passwordBytes: number[]) =>
    service.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: Buffer.concat([
        Buffer.from(`{"email":"${email}","password":"correct horse `),
        Buffer.from(passwordBytes),
        Buffer.from('"}'),
      ]),
    })

  it('R1.4 two passwords that differ only in invalid bytes do not both log in', async () => {
    const email = uniqueEmail()
    // decoded as U+FFFD, both bodies would carry the same password
    const register = await post('/auth/register', email, [0xff, 0xfe])
    expect(register.statusCode).toBe(400)
    expect(register.json()).toEqual({ code: 400, message: 'Request body is not valid UTF-8', data: null })
    expect((await post('/auth/login', email, [0xc0, 0x80])).statusCode).toBe(400)

    // nor does the password a decoder would have made of them log in for those bytes
    const asDecoded = [0xef, 0xbf, 0xbd, 0xef, 0xbf, 0xbd]
    expect((await post('/auth/register', email, asDecoded)).statusCode).toBe(200)
    expect((await post('/auth/login', email, asDecoded)).statusCode).toBe(200)
    expect((await post('/auth/login', email, [0xff, 0xfe])).statusCode).toBe(400)
    expect((await post('/auth/login', email, [0x80, 0x80])).statusCode).toBe(400)
  })
})
