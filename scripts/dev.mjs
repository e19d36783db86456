// `npm run dev`: builds once, then rebuilds dist/ (tsc --watch, which reports type errors) and the bundle that
// `tessera` runs (esbuild's watch mode) whenever a file of src/ changes, and restarts the service whenever the bundle
// changes (node --watch). Arguments after `--` go to `tessera serve`. Ctrl-C stops them all.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { context } from 'esbuild'
import { bundleOptions } from './build-bundle.mjs'

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const project = ['-p', 'tsconfig.build.json']

// a type error is reported but does not stop the service: tsc still writes the JavaScript, as in watch mode
spawnSync(process.execPath, [tsc, ...project], { stdio: 'inherit' })
if (!existsSync(new URL('../dist/commands/cli.js', import.meta.url))) process.exit(1)
const bundling = await context(bundleOptions)
await bundling.rebuild()
await bundling.watch()

const children = [
  spawn(process.execPath, [tsc, ...project, '--watch', '--preserveWatchOutput'], { stdio: 'inherit' }),
  spawn(
    process.execPath,
    [
      '--watch',
      '--max-semi-space-size=8',
      '--heap-growing-percent=50',
      './bin/tessera.js',
      'serve',
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit' },
  ),
]
const stop = () => {
  for (const child of children) child.kill('SIGTERM')
  void bundling.dispose()
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
for (const child of children) {
  child.on('exit', (code) => {
    stop()
    process.exitCode = code ?? 0
  })
}
