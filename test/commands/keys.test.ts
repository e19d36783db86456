import { spawnSync } from 'node:child_process'
import { createPrivateKey, createPublicKey } from 'node:crypto'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadAccessTokenKeys } from '../../src/auth/access-token-keys.js'
import { KEYS_USAGE, runKeysCommand } from '../../src/commands/keys.js'
import { BIN, childEnv } from '../support/process.js'
import { useTempDir } from '../support/temp-dir.js'

/** Runs `tessera keys` in-process with its output captured. */
async function keys(args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await runKeysCommand(args, {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
  })
  return { code, stdout, stderr }
}

/** The `name  value` lines the command prints, by name. */
const fields = (stdout: string) =>
  Object.fromEntries(
    stdout
      .split('\n')
      .map((line) => /^(private key|public key|algorithm|kid) +(\S+)/.exec(line))
      .flatMap((match) => (match ? [[match[1], match[2]]] : [])),
  ) as Record<'private key' | 'public key' | 'algorithm' | 'kid', string>

describe('tessera keys generate', () => {
  const temp = useTempDir('keys')

  it.each(['EdDSA', 'ES256'] as const)(
    'writes a %s private key (PKCS#8, 0600) and its public key beside it; the kid it prints is the JWKS kid',
    async (algorithm) => {
      const out = join(temp.path, `${algorithm}.pem`)
      const result = await keys(['generate', '--algorithm', algorithm, '--out', out])
      expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' })
      const printed = fields(result.stdout)
      expect(printed).toMatchObject({
        'private key': out,
        'public key': join(temp.path, `${algorithm}.pub.pem`),
        algorithm,
      })
      const privatePem = await readFile(out, 'utf8')
      expect(privatePem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/)
      expect((await stat(out)).mode & 0o777).toBe(0o600)
      const publicPem = await readFile(printed['public key'], 'utf8')
      expect(publicPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/)
      expect(result.stdout.endsWith(publicPem)).toBe(true)
      // the two halves are one pair
      expect(createPublicKey(createPrivateKey(privatePem)).equals(createPublicKey(publicPem))).toBe(true)
      // the files are what the service reads, as the current key and as a previous one
      const current = await loadAccessTokenKeys({
        signing: { algorithm, privateKeyFile: out, previousPublicKeyFiles: [], issuer: null },
        storage: { dataDir: temp.path },
      })
      expect(current?.kid).toBe(printed.kid)
      const other = join(temp.path, `${algorithm}-next.pem`)
      expect((await keys(['generate', '--algorithm', algorithm, '--out', other])).code).toBe(0)
      const rotated = await loadAccessTokenKeys({
        signing: {
          algorithm,
          privateKeyFile: other,
          previousPublicKeyFiles: [printed['public key']],
          issuer: null,
        },
        storage: { dataDir: temp.path },
      })
      expect(rotated?.jwks.keys.map((jwk) => jwk.kid)[1]).toBe(printed.kid)
    },
  )

  it('refuses to overwrite either file, and leaves no half of a pair behind', async () => {
    const out = join(temp.path, 'taken.pem')
    await writeFile(out, 'precious')
    const taken = await keys(['generate', '--out', out])
    expect(taken).toEqual({
      code: 1,
      stdout: '',
      stderr: `tessera keys: ${out} exists; not overwritten (name another file with --out)\n`,
    })
    expect(await readFile(out, 'utf8')).toBe('precious')

    const fresh = join(temp.path, 'fresh.pem')
    const publicTaken = join(temp.path, 'fresh.pub.pem')
    await writeFile(publicTaken, 'also precious')
    const half = await keys(['generate', '--out', fresh])
    expect(half.code).toBe(1)
    expect(half.stderr).toBe(
      `tessera keys: ${publicTaken} exists; not overwritten (name another file with --out)\n`,
    )
    expect(await readFile(publicTaken, 'utf8')).toBe('also precious')
    await expect(stat(fresh)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('names a file without .pem by appending .pub.pem, and an unwritable place is exit 1', async () => {
    const out = join(temp.path, 'signing-key')
    const result = await keys(['generate', '--out', out])
    expect(fields(result.stdout)['public key']).toBe(`${out}.pub.pem`)
    const nowhere = join(temp.path, 'missing-dir', 'key.pem')
    expect(await keys(['generate', '--out', nowhere])).toEqual({
      code: 1,
      stdout: '',
      stderr: `tessera keys: cannot create ${nowhere}: ENOENT\n`,
    })
  })

  it.each([
    [[], 'missing subcommand: generate'],
    [['rotate'], 'unknown subcommand "rotate"'],
    [['generate', 'extra'], 'unexpected argument "extra"'],
    [['generate', '--algorithm', 'HS256'], '--algorithm must be EdDSA or ES256, got "HS256"'],
    [['generate', '--algorithm', 'RS256'], '--algorithm must be EdDSA or ES256, got "RS256"'],
    [['generate', '--out'], "Option '--out <value>' argument missing"],
  ])('%j is a usage error: exit 2, the reason and the usage on stderr', async (args, reason) => {
    const result = await keys(args)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe(`tessera keys: ${reason}\n${KEYS_USAGE}`)
  })

  it('--help prints the usage', async () => {
    expect(await keys(['--help'])).toEqual({ code: 0, stdout: KEYS_USAGE, stderr: '' })
    expect((await keys(['generate', '-h'])).stdout).toBe(KEYS_USAGE)
  })

  it('is a command of the built tessera, which writes into the current directory by default', () => {
    const result = spawnSync(process.execPath, [BIN, 'keys', 'generate', '--algorithm', 'ES256'], {
      cwd: temp.path,
      env: childEnv({}),
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(result.status, result.stderr).toBe(0)
    expect(fields(result.stdout)).toMatchObject({
      'private key': join(temp.path, 'access-token-es256.pem'),
      algorithm: 'ES256',
      kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    })
  })
})
