// The module hook of record-loaded-modules.mjs (it runs on the loader's own thread): appends each loaded URL's path.
import { appendFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

let file = ''

/** @param {{ file: string }} data */
export function initialize(data) {
  file = data.file
}

/** @type {import('node:module').LoadHook} */
export async function load(url, context, nextLoad) {
  if (url.startsWith('file:')) appendFileSync(file, `${fileURLToPath(url)}\n`)
  return nextLoad(url, context)
}
