import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { useTempDir } from '../support/temp-dir.js'
import { startTestService, type TestService } from '../support/test-service.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))

// Redocly CLI's recommended rules (redocly.yaml at the root, which turns three off and says why) over the document
// the service serves: no error and no warning.
describe('R4.9.8 redocly lint: the served API document', () => {
  const temp = useTempDir('redocly')
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
  })
  afterAll(() => service.close())

  it('has no error and no warning under redocly.yaml', async () => {
    const answer = await service.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(answer.statusCode).toBe(200)
    const file = await temp.file('openapi.json', answer.body)
    const { stdout } = await run(
      `${root}node_modules/.bin/redocly`,
      ['lint', '--config', `${root}redocly.yaml`, '--format', 'json', file],
      {
        cwd: temp.path,
        // no network here: no telemetry, no update check
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        timeout: 60_000,
      },
    )
    const report = JSON.parse(stdout) as { totals: Record<string, number>; problems: unknown[] }
    expect(report.problems).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
  })
})
