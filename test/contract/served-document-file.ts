import { fileURLToPath } from 'node:url'
import { beforeAll, expect } from 'vitest'
import { backends } from '../support/backends.js'
import { useTempDir } from '../support/temp-dir.js'
import { startTestService } from '../support/test-service.js'

/** The repository's root, where the linters' configurations and binaries are. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * The API document a test service serves, written to `openapi.json` in a temporary directory of the calling test
 * file before its tests, for a linter to read: `path` (the file), `dir` (its directory) and `document` (parsed).
 */
export function useServedDocumentFile(prefix: string) {
  const temp = useTempDir(prefix)
  const served = { path: '', dir: '', document: undefined as unknown }
  beforeAll(async () => {
    const service = await startTestService(backends[0]!)
    try {
      const answer = await service.app.inject({ method: 'GET', url: '/openapi.json' })
      expect(answer.statusCode).toBe(200)
      served.path = await temp.file('openapi.json', answer.body)
      served.dir = temp.path
      served.document = answer.json()
    } finally {
      await service.close()
    }
  })
  return served
}
