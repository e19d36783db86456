// Preloaded with `node --import` by test/commands/module-load.test.ts: writes to the file named by
// TESSERA_LOADED_MODULES every module the process loaded, one path per line: each ES module as the loader loads it
// (a module hook, which also sees the entry file of each CommonJS package imported from ES modules), and at exit
// every CommonJS module of require's cache (the files such a package required in turn).
import { appendFileSync } from 'node:fs'
import { createRequire, register } from 'node:module'

const file = process.env.TESSERA_LOADED_MODULES
if (file) {
  register('./loaded-modules-hook.mjs', import.meta.url, { data: { file } })
  const require = createRequire(import.meta.url)
  process.on('exit', () => {
    const paths = Object.keys(require.cache)
    if (paths.length > 0) appendFileSync(file, `${paths.join('\n')}\n`)
  })
}
