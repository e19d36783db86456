import { readFile } from 'node:fs/promises'

/** name and version from package.json, for GET /info and the OpenAPI document. */
export async function readAppInfo(): Promise<{ name: string; version: string }> {
  const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))
  return { name: String(manifest.name), version: String(manifest.version) }
}
