import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { link, mkdir, unlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { type AuthConfig, isStrongSecret, SECRET_RULE } from './auth-config.js'
import { ConfigError } from './config-error.js'
import type { StorageConfig } from './storage-config.js'

/**
 * The development JWT secret: read from `<dataDir>/jwt-secret`, created there (mode 0600) on first start so that
 * tokens survive a restart. The file appears with its content in one step (written aside, then hard-linked into
 * place, which fails if another process got there first), so processes starting together share one secret and
 * none reads a half-written file. The data directory, when this creates it, is the owner's only (0700): it holds
 * this secret and the SQLite files with the password hashes (docs/api.md R5.5.4).
 */
export async function loadOrCreateDevSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'jwt-secret')
  const secret = (await readOrCreateFileOnce(file, () => `${randomBytes(48).toString('base64url')}\n`)).trim()
  if (!isStrongSecret(secret)) {
    throw new Error(
      `${file} holds a secret of fewer than ${SECRET_RULE.minLength} characters or ${SECRET_RULE.minDistinct} distinct ones; delete it to renew`,
    )
  }
  return secret
}

/**
 * The content of `file`, which is created first (createFileOnce) with `make()` when it does not exist; when processes
 * create it at once, the one kept is read back. Every start but the first finds the file: it is read at once,
 * synchronously (before the port opens), and nothing is made or written. Also keeps the development signing key
 * (auth/access-token-keys.ts).
 */
export async function readOrCreateFileOnce(file: string, make: () => string): Promise<string> {
  const existing = readIfPresent(file)
  if (existing !== null) return existing
  await createFileOnce(file, make())
  return readFileSync(file, 'utf8')
}

/** The content of `file`, or null when it does not exist. */
function readIfPresent(file: string): string | null {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

/**
 * Creates `file` (mode 0600) holding `content` unless it exists, in one step (written aside, then hard-linked into
 * place), so that processes starting together keep the first one's and none reads a half-written file. Its
 * directory, when this creates it, is the owner's only (0700).
 */
async function createFileOnce(file: string, content: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 })
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(draft, content, { mode: 0o600 })
  try {
    await link(draft, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    await unlink(draft)
  }
}

/** AUTH_JWT_SECRET, or in development the secret persisted in DATA_DIR. */
export async function signingSecret(config: { auth: AuthConfig; storage: StorageConfig }): Promise<string> {
  if (config.auth.jwtSecret !== null) return config.auth.jwtSecret
  try {
    return await loadOrCreateDevSecret(config.storage.dataDir)
  } catch (error) {
    throw new ConfigError('DATA_DIR', `cannot hold the development secret: ${(error as Error).message}`)
  }
}
