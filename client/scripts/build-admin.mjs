// Builds the admin console (admin/, which the service serves as GET /admin) into dist/admin/: each module of admin/
// as <name>.js, and index.html and console.css copied as they are. The build type-checks the modules first
// (`tsc -p admin/tsconfig.json`); that check reads the library's sources through admin/client.d.ts, so tsc would
// write them too, and only the console's modules are wanted: each is transpiled alone here, with the same compiler
// options. The browser loads them as they are, as ES modules: a module imports the console's other modules
// ('./dom.js'), never the library statically (console.ts imports './client.js' when it starts, to say so when the
// library is not built).
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const admin = join(dirname(fileURLToPath(import.meta.url)), '..', 'admin')
const out = join(admin, '..', 'dist', 'admin')

const configFile = join(admin, 'tsconfig.json')
const { config, error } = ts.readConfigFile(configFile, ts.sys.readFile)
if (error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'))
const { options } = ts.parseJsonConfigFileContent(config, ts.sys, admin, undefined, configFile)

const modules = readdirSync(admin)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map((file) => file.slice(0, -3))
if (!modules.includes('console')) throw new Error('admin/ has no console.ts')
const staticImport = /^\s*(?:import|export)\s+(?!type\b)[^'"]*?from\s+'([^']+)'/gm

const built = modules.map((name) => {
  const source = readFileSync(join(admin, `${name}.ts`), 'utf8')
  const { outputText } = ts.transpileModule(source, { compilerOptions: options, fileName: `${name}.ts` })
  for (const [, specifier] of outputText.matchAll(staticImport)) {
    const imported = /^\.\/([a-z0-9-]+)\.js$/.exec(specifier)?.[1]
    if (imported === undefined || imported === 'client' || !modules.includes(imported))
      throw new Error(`${name}.ts may import statically only the console's own modules, not ${specifier}`)
  }
  return [name, outputText]
})

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
for (const [name, text] of built) writeFileSync(join(out, `${name}.js`), text)
for (const file of ['index.html', 'console.css']) copyFileSync(join(admin, file), join(out, file))
