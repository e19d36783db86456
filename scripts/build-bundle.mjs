// Bundles the `tessera` command (src/commands/cli.ts and what it imports, packages included) into bundle/, which
// bin/tessera.js loads: a handful of files instead of the hundreds of dist/ and node_modules/ to resolve and read at
// every start. Each dynamic import() stays a chunk of its own, loaded only when the code asks for it. The worker
// threads are entries of their own, beside the chunks, where `new URL('./x.js', import.meta.url)` finds them.
// `npm run build` and `prepare` run it after tsc; `node scripts/build-bundle.mjs` alone rebuilds the bundle.
import { readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('../', import.meta.url))

/** Loaded from node_modules/ as they are: the native add-ons, which cannot be bundled. */
export const EXTERNAL = ['better-sqlite3', 'better-sqlite3-napi', '@node-rs/argon2', 'sharp', 'koffi']

const SWAGGER_UI = `${sep}@fastify${sep}swagger-ui${sep}`

/**
 * @fastify/swagger-ui serves the Swagger UI's files from its own folder, which it finds from __dirname. Bundled, each
 * of its modules is given the __dirname it has in the installed package, which Node resolves at run time (the files
 * are served from node_modules/, not bundled). External, it and its dependencies (yaml, @fastify/static, …) were some
 * 120 files a development start loaded; bundled, that start took 5–10 % less. (@fastify/swagger also reads its own
 * package.json from __dirname, but only for a default title and version, which the service gives.)
 * @type {import('esbuild').Plugin}
 */
const swaggerUiFolder = {
  name: 'swagger-ui-folder',
  setup(build) {
    build.onLoad(
      { filter: /[\\/]node_modules[\\/]@fastify[\\/]swagger-ui[\\/].*\.js$/ },
      async ({ path }) => {
        const packageDir = path.slice(0, path.lastIndexOf(SWAGGER_UI) + SWAGGER_UI.length)
        const folder = JSON.stringify(relative(packageDir, dirname(path)).split(sep).join('/'))
        const dir = `require('node:path').join(require('node:path').dirname(require.resolve('@fastify/swagger-ui')), ${folder})`
        return { contents: `var __dirname = ${dir};\n${await readFile(path, 'utf8')}`, loader: 'js' }
      },
    )
  },
}

/** @type {import('esbuild').BuildOptions} */
export const bundleOptions = {
  absWorkingDir: root,
  entryPoints: {
    cli: 'src/commands/cli.ts',
    'argon2-thread': 'src/auth/argon2-thread.js',
    'sqlite-writer-thread': 'src/storage/sqlite/sqlite-writer-thread.js',
  },
  outdir: 'bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  plugins: [swaggerUiFolder],
  chunkNames: 'chunk-[hash]',
  // the CommonJS packages inside the bundle require Node's built-in modules, and a few name __dirname or __filename
  // (ioredis, to trim the stack of a command's error), which are bundle/'s for them all: unset, the names would throw
  banner: {
    js: [
      "import { createRequire as __tesseraRequire } from 'node:module';",
      "import { fileURLToPath as __tesseraPath } from 'node:url';",
      'const require = __tesseraRequire(import.meta.url);',
      'const __tesseraFilename = __tesseraPath(import.meta.url);',
      "const __tesseraDirname = __tesseraPath(new URL('.', import.meta.url));",
    ].join(''),
  },
  define: { __dirname: '__tesseraDirname', __filename: '__tesseraFilename' },
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
}

/**
 * Each JavaScript file of the bundle and the modules (paths from the package root: src/…, node_modules/…) it holds:
 * bundle/modules.json, from which test/commands/module-load.test.ts tells what a command loaded.
 * @param {import('esbuild').Metafile} metafile
 */
export function modulesByFile(metafile) {
  return Object.fromEntries(
    Object.entries(metafile.outputs)
      .filter(([file]) => file.endsWith('.js'))
      .map(([file, output]) => [file.replace(/^bundle\//, ''), Object.keys(output.inputs)]),
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await rm(new URL('../bundle/', import.meta.url), { recursive: true, force: true })
  const { metafile } = await build(bundleOptions)
  if (metafile === undefined) throw new Error('esbuild wrote no metafile')
  await writeFile(
    new URL('../bundle/modules.json', import.meta.url),
    `${JSON.stringify(modulesByFile(metafile))}\n`,
  )
}
