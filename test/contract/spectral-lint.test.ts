import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ROOT, useServedDocumentFile } from './served-document-file.js'

const run = promisify(execFile)

interface SpectralProblem {
  code: string
  message: string
  path: string[]
  severity: number
}

// Spectral's standard `spectral:oas` ruleset (.spectral.yaml at the root, which turns two rules off and says why)
// over the document the service serves: no error, no warning, no information and no hint. Generated clients and
// documentation portals show an operation's description, so every operation has one.
describe('R4.9.8 spectral lint: the served API document', () => {
  const served = useServedDocumentFile('spectral')

  it('has no problem of any severity under .spectral.yaml, and every operation has a description', async () => {
    const output = `${served.dir}/report.json`
    await run(
      `${ROOT}node_modules/.bin/spectral`,
      [
        'lint',
        '--ruleset',
        `${ROOT}.spectral.yaml`,
        '--format',
        'json',
        '--output',
        output,
        '--fail-severity',
        'hint',
        '--quiet',
        served.path,
      ],
      // no network here: no telemetry
      { cwd: served.dir, env: { ...process.env, SCARF_ANALYTICS: 'false' }, timeout: 60_000 },
    ).catch((error: { code?: unknown }) => {
      // exit 1 is "problems found", which the report lists; anything else is a failure of the run itself
      if (error.code !== 1) throw error
    })
    const problems = JSON.parse(await readFile(output, 'utf8')) as SpectralProblem[]
    expect(problems.map(({ code, message, path }) => ({ code, message, path: path.join('.') }))).toEqual([])

    const document = served.document as { paths: Record<string, Record<string, { description?: string }>> }
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(operation.description, `${method.toUpperCase()} ${path}`).toMatch(/\S{3,}/)
      }
    }
  })
})
