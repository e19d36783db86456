import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { gzipSync } from 'node:zlib'
import { minify } from 'terser'
import { beforeAll, describe, expect, it } from 'vitest'

const clientDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const bundle = join(clientDir, 'dist', 'index.js')

describe('the built bundle', () => {
  beforeAll(() => {
    execFileSync('npm', ['run', 'build'], { cwd: clientDir, stdio: 'ignore' })
  }, 60_000)

  it('is one ES module without imports, which a browser loads as it is', async () => {
    const source = readFileSync(bundle, 'utf8')
    expect(source).not.toMatch(/^\s*import\b/m)
    expect(source).not.toMatch(/\bimport\s*\(/)
    const module = await import(pathToFileURL(bundle).href)
    expect(Object.keys(module).sort()).toEqual(['TesseraError', 'createTesseraClient'])
  })

  it('stays under 3 KB minified and gzipped', async () => {
    const { code } = await minify(readFileSync(bundle, 'utf8'), { module: true, compress: { passes: 2 } })
    const gzipped = gzipSync(code ?? '', { level: 9 }).length
    console.log(`@tessera/client: ${code?.length} bytes minified, ${gzipped} bytes minified and gzipped`)
    expect(gzipped).toBeLessThan(3 * 1024)
  })
})
