import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

const require = createRequire(import.meta.url)

/**
 * The better-sqlite3 build for the running Node.js. From Node 24.19 on, better-sqlite3 12.x (built on
 * node::ObjectWrap) aborts the process when the garbage collector finalizes one of its statements
 * (nodejs/node#65446); 13.x (Node-API) does not, but it requires Node 22 and crashes on Node 20. So Node 20 gets
 * 12.x, and Node 22 and later 13.x (installed as `better-sqlite3-napi`); both have the same API.
 */
export function loadBetterSqlite3(): typeof BetterSqlite3 {
  return require(betterSqlite3Path())
}

/** Where that build's module is, for a thread that loads it itself. */
export function betterSqlite3Path(): string {
  const major = Number(process.versions.node.split('.')[0])
  return require.resolve(major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3')
}
