// Builds the demo page (demo/, which the service serves as GET /demo) into dist/demo/: demo.ts as demo.js, and
// index.html and demo.css copied as they are. The build type-checks demo.ts first (`tsc -p demo/tsconfig.json`); that
// check reads the library's sources through demo/client.d.ts, so tsc would write them too, and only demo.ts is
// wanted: it is transpiled alone here, with the same compiler options. It imports nothing at run time but
// './client.js' (the built library, which the service serves beside it), and that import stays as it is.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const demo = join(dirname(fileURLToPath(import.meta.url)), '..', 'demo')
const out = join(demo, '..', 'dist', 'demo')

const configFile = join(demo, 'tsconfig.json')
const { config, error } = ts.readConfigFile(configFile, ts.sys.readFile)
if (error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'))
const { options } = ts.parseJsonConfigFileContent(config, ts.sys, demo, undefined, configFile)

const source = readFileSync(join(demo, 'demo.ts'), 'utf8')
const { outputText } = ts.transpileModule(source, { compilerOptions: options, fileName: 'demo.ts' })
if (/^\s*import\s+(?!type\b)/m.test(outputText)) throw new Error('demo.ts may only import types statically')

mkdirSync(out, { recursive: true })
writeFileSync(join(out, 'demo.js'), outputText)
for (const file of ['index.html', 'demo.css']) copyFileSync(join(demo, file), join(out, file))
