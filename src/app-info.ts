import { readFileSync } from 'node:fs'
import { PACKAGE_ROOT } from './package-root.js'

/**
 * name and version from package.json, for GET /info and the OpenAPI document. Read synchronously: once, at start,
 * before the port opens (a promised read is a round trip to libuv's threads on a cold start's path).
 */
export function readAppInfo(): { name: string; version: string } {
  const manifest = JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8'))
  return { name: String(manifest.name), version: String(manifest.version) }
}
