import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ROOT, useServedDocumentFile } from './served-document-file.js'

const run = promisify(execFile)

// Redocly CLI's recommended rules (redocly.yaml at the root, which turns three off and says why) over the document
// the service serves: no error and no warning.
describe('R4.9.8 redocly lint: the served API document', () => {
  const served = useServedDocumentFile('redocly')

  it('has no error and no warning under redocly.yaml', async () => {
    const { stdout } = await run(
      `${ROOT}node_modules/.bin/redocly`,
      ['lint', '--config', `${ROOT}redocly.yaml`, '--format', 'json', served.path],
      {
        cwd: served.dir,
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
