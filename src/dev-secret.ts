import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * The development JWT secret: read from `<dataDir>/jwt-secret`, created there (mode 0600) on first start so that
 * tokens survive a restart. Creation is exclusive, so workers starting together end up with the same secret.
 */
export async function loadOrCreateDevSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'jwt-secret')
  await mkdir(dataDir, { recursive: true })
  try {
    await writeFile(file, `${randomBytes(48).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const secret = (await readFile(file, 'utf8')).trim()
  if (secret.length < 32)
    throw new Error(`${file} holds a secret shorter than 32 characters; delete it to renew`)
  return secret
}
