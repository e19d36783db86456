import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
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
const passkeysBundle = join(outDir, 'passkeys.js')

/** The size of a built file minified and gzipped, as a page's visitor downloads it. */
async function shippedBytes(file: string, name: string): Promise<number> {
  const { code } = await minify(readFileSync(file, 'utf8'), { module: true, compress: { passes: 2 } })
  const gzipped = gzipSync(code ?? '', { level: 9 }).length
  console.log(`${name}: ${code?.length} bytes minified, ${gzipped} bytes minified and gzipped`)
  return gzipped
}

describe('the built bundle', () => {
  beforeAll(() => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
    execFileSync(process.execPath, [tsc, '-p', join(clientDir, 'tsconfig.json'), '--outDir', outDir])
    execFileSync(process.execPath, [join(clientDir, 'scripts', 'bundle.mjs'), outDir])
  }, 60_000)
  afterAll(() => rmSync(outDir, { recursive: true, force: true }))

  it('is one ES module per entry point without imports, which a browser loads as it is', async () => {
    for (const [file, names] of [
      [bundle, ['TesseraError', 'createTesseraClient']],
      [passkeysBundle, ['passkeys', 'passkeysSupported']],
    ] as const) {
      const source = readFileSync(file, 'utf8')
      expect(source).not.toMatch(/^\s*import\b/m)
      expect(source).not.toMatch(/\bimport\s*\(/)
      const module = await import(pathToFileURL(file).href)
      expect(Object.keys(module).sort()).toEqual(names)
    }
    // nothing but the entry points is left to be packed
    expect(
      readdirSync(outDir)
        .filter((name) => name.endsWith('.js'))
        .sort(),
    ).toEqual(['index.js', 'passkeys.js'])
  })

  // 3 KB until the sign-in without a popup made its own PKCE verifier (Web Crypto, sessionStorage): some 245 bytes;
  // 3.25 KB until the second factor (issue 32: the challenge of every sign-in, verifyMfa, the authenticator app's
  // enrolment, the factors, the recovery codes and the HTTP half of the passkeys): some 350 bytes
  it('stays under 3.6 KB minified and gzipped', async () => {
    expect(await shippedBytes(bundle, '@tessera/client')).toBeLessThan(3.6 * 1024)
  })

  // the browser's WebAuthn ceremonies, apart from the core: only a page with passkeys loads them
  it('keeps the passkeys entry point under 0.75 KB minified and gzipped', async () => {
    expect(await shippedBytes(passkeysBundle, '@tessera/client/passkeys')).toBeLessThan(0.75 * 1024)
  })
})
