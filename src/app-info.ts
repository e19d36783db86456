import { readFile } from 'node:fs/promises'
import { PACKAGE_ROOT } from './package-root.js'

/** name and version from package.json, for GET /info and the OpenAPI document. */
export async function readAppInfo(): Promise<{ name: string; version: string }> {
  const manifest = JSON.parse(await readFile(new URL('package.json', PACKAGE_ROOT), 'utf8'))
  return { name: String(manifest.name), version: String(manifest.version) }
}
