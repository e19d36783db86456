import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'

export interface TempDir {
  /** The directory; read it inside a test or hook, once the suite has started. */
  readonly path: string
  /** Writes `text` to `name` in the directory and returns the file's path. */
  file(name: string, text: string): Promise<string>
}

/** A fresh directory for the calling test file, created before its tests and removed after them. */
export function useTempDir(prefix: string): TempDir {
  let path: string | undefined
  beforeAll(async () => {
    path = await mkdtemp(join(tmpdir(), `tessera-${prefix}-`))
  })
  afterAll(async () => {
    if (path) await rm(path, { recursive: true, force: true })
  })
  const dir: TempDir = {
    get path() {
      if (path === undefined) throw new Error('the temporary directory exists only while the suite runs')
      return path
    },
    async file(name, text) {
      const file = join(dir.path, name)
      await writeFile(file, text)
      return file
    },
  }
  return dir
}
