import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { gzipSync } from 'node:zlib'
import { minify } from 'terser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const clientDir = join(dirname(fileURLToPath(import.meta.url)), '..')
// built from the sources as they are, the way `npm run build` does, into a directory of its own: dist/ is served
// by the demo page's tests, which may be running at the same time
const outDir = mkdtempSync(join(tmpdir(), 'tessera-client-build-'))
const bundle = join(outDir, 'index.js')

describe('the built bundle', () => {
  beforeAll(() => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
    execFileSync(process.execPath, [tsc, '-p', join(clientDir, 'tsconfig.json'), '--outDir', outDir])
    execFileSync(process.execPath, [join(clientDir, 'scripts', 'bundle.mjs'), outDir])
  }, 60_000)
  afterAll(() => rmSync(outDir, { recursive: true, force: true }))

  it('is one ES module without imports, which a browser loads as it is', async () => {
    const source = readFileSync(bundle, 'utf8')
    expect(source).not.toMatch(/^\s*import\b/m)
    expect(source).not.toMatch(/\bimport\s*\(/)
    const module = await import(pathToFileURL(bundle).href)
    expect(Object.keys(module).sort()).toEqual(['TesseraError', 'createTesseraClient'])
  })

  // 3 KB until the sign-in without a popup made its own PKCE verifier (Web Crypto, sessionStorage): some 245 bytes
  it('stays under 3.25 KB minified and gzipped', async () => {
    const { code } = await minify(readFileSync(bundle, 'utf8'), { module: true, compress: { passes: 2 } })
    const gzipped = gzipSync(code ?? '', { level: 9 }).length
    console.log(`@tessera/client: ${code?.length} bytes minified, ${gzipped} bytes minified and gzipped`)
    expect(gzipped).toBeLessThan(3.25 * 1024)
  })
})
