import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { useTempDir } from '../support/temp-dir.js'
import { startTestService, type TestService } from '../support/test-service.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))

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
  const temp = useTempDir('spectral')
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
  })
  afterAll(() => service.close())

  it('has no problem of any severity under .spectral.yaml, and every operation has a description', async () => {
    const answer = await service.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(answer.statusCode).toBe(200)
    const file = await temp.file('openapi.json', answer.body)
    const output = await temp.file('report.json', '')
    await run(
      `${root}node_modules/.bin/spectral`,
      [
        'lint',
        '--ruleset',
        `${root}.spectral.yaml`,
        '--format',
        'json',
        '--output',
        output,
        '--fail-severity',
        'hint',
        '--quiet',
        file,
      ],
      // no network here: no telemetry
      { cwd: temp.path, env: { ...process.env, SCARF_ANALYTICS: 'false' }, timeout: 60_000 },
    ).catch((error: { code?: unknown }) => {
      // exit 1 is "problems found", which the report lists; anything else is a failure of the run itself
      if (error.code !== 1) throw error
    })
    const problems = JSON.parse(await readFile(output, 'utf8')) as SpectralProblem[]
    expect(problems.map(({ code, message, path }) => ({ code, message, path: path.join('.') }))).toEqual([])

    const document = answer.json() as { paths: Record<string, Record<string, { description?: string }>> }
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(operation.description, `${method.toUpperCase()} ${path}`).toMatch(/\S{3,}/)
      }
    }
  })
})
