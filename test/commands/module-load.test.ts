import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { BIN, childEnv } from '../support/process.js'
import { useTempDir } from '../support/temp-dir.js'

const RECORDER = fileURLToPath(new URL('../support/record-loaded-modules.mjs', import.meta.url))

/** The packages a command that needs no HTTP server and no other database must not load. */
const SERVER_PACKAGES = ['fastify', '@fastify/swagger', '@fastify/swagger-ui', 'fast-jwt', 'pino']
const OTHER_DRIVERS = ['pg', 'mysql2', 'ioredis']
/** The mail libraries: loaded only when mail is configured (SMTP_URL) or a message is composed. */
const MAIL_PACKAGES = ['nodemailer']

/** Runs the built `tessera` with `args` and returns the packages (node_modules/<name>) and src files it loaded. */
function modulesLoadedBy(args: string[], env: Record<string, string>, dir: string) {
  const record = join(dir, `loaded-${args.join('-').replace(/[^\w.-]/g, '_')}.txt`)
  const result = spawnSync(process.execPath, ['--import', RECORDER, BIN, ...args], {
    env: childEnv({ ...env, TESSERA_LOADED_MODULES: record }),
    encoding: 'utf8',
    timeout: 30_000,
  })
  expect(result.status, result.stderr).toBe(0)
  return loadedIn(record)
}

/**
 * Starts the built `tessera serve`, waits until it listens (its sender started, a first pass made), stops it with
 * SIGTERM and returns what it loaded.
 */
async function modulesLoadedByServe(name: string, env: Record<string, string>, dir: string) {
  const record = join(dir, `loaded-serve-${name}.txt`)
  const child = spawn(process.execPath, ['--import', RECORDER, BIN, 'serve'], {
    env: childEnv({
      DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}`,
      DATA_DIR: dir,
      ...env,
      TESSERA_LOADED_MODULES: record,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = once(child, 'exit')
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 30_000)
    const onData = (chunk: Buffer) => {
      output += chunk
      if (!/listening on/.test(output)) return
      clearTimeout(timer)
      resolve()
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk
    })
    void exited.then(() => reject(new Error(`serve exited: ${output}`)))
  })
  // a second for the sender's first passes over the (empty) outbox
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  child.kill('SIGTERM')
  const [code] = await exited
  expect(code, output).toBe(0)
  return loadedIn(record)
}

/**
 * The modules of the bundle (bundle/, which bin/tessera.js loads): each of its files and the modules it holds, by
 * their paths from the root (src/…, node_modules/<name>/…), as scripts/build-bundle.mjs writes them.
 */
const BUNDLE = new URL('../../bundle/', import.meta.url)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const modulesOfBundle: Record<string, string[]> = JSON.parse(
  readFileSync(new URL('modules.json', BUNDLE), 'utf8'),
)

/**
 * The packages (node_modules/<name>) and the files named in a record: a file of the bundle stands for the modules it
 * holds, so that a package or a src/ file that comes into a file the command loads shows here, as it would unbundled.
 */
function loadedIn(record: string) {
  const bundleDir = fileURLToPath(BUNDLE)
  const paths = readFileSync(record, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((path) => {
      if (!path.startsWith(bundleDir)) return [path]
      const held = modulesOfBundle[path.slice(bundleDir.length)]
      if (held === undefined)
        throw new Error(`${path} is not in bundle/modules.json: rebuild (npm run build)`)
      return held.map((module) => join(ROOT, module))
    })
  const packages = new Set(
    paths.flatMap((path) => {
      const match = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)
      return match?.[1] === undefined ? [] : [match[1]]
    }),
  )
  return { packages, paths }
}

describe('what a command loads', () => {
  const temp = useTempDir('module-load')
  const dir = () => temp.path

  it('tessera --help loads neither the HTTP server nor any database driver', () => {
    const { packages, paths } = modulesLoadedBy(['--help'], {}, dir())
    // the recorder saw the dispatcher: an empty record would pass every check below
    expect(paths.some((path) => path.endsWith('/src/commands/cli.ts'))).toBe(true)
    for (const name of [...SERVER_PACKAGES, ...OTHER_DRIVERS, ...MAIL_PACKAGES, 'better-sqlite3', 'kysely'])
      expect(packages, name).not.toContain(name)
  })

  it('tessera serve without SMTP_URL loads no mail library; with SMTP_URL it loads nodemailer at start', async () => {
    const withoutSmtp = await modulesLoadedByServe('without-smtp', {}, dir())
    expect(withoutSmtp.paths.some((path) => path.endsWith('/src/mail/open-mail.ts'))).toBe(true)
    expect(withoutSmtp.packages).toContain('fastify')
    for (const name of MAIL_PACKAGES) expect(withoutSmtp.packages, name).not.toContain(name)
    // the API document's generator and Swagger UI are set up at the first request for them (src/http/openapi.ts)
    expect(withoutSmtp.paths.some((path) => path.endsWith('/src/http/openapi.ts'))).toBe(true)
    for (const name of ['@fastify/swagger', '@fastify/swagger-ui', '@fastify/static', 'yaml'])
      expect(withoutSmtp.packages, name).not.toContain(name)
    // nothing listens there: the transport connects only to send
    const withSmtp = await modulesLoadedByServe('with-smtp', { SMTP_URL: 'smtp://127.0.0.1:9' }, dir())
    expect(withSmtp.packages).toContain('nodemailer')
  })

  it('tessera mail test loads nodemailer, and neither the HTTP server nor any database driver', () => {
    const { packages } = modulesLoadedBy(['mail', 'test', 'owner@example.com'], { DATA_DIR: dir() }, dir())
    expect(packages).toContain('nodemailer')
    for (const name of [...SERVER_PACKAGES, ...OTHER_DRIVERS, 'better-sqlite3', 'kysely'])
      expect(packages, name).not.toContain(name)
  })

  it('tessera users list on SQLite loads SQLite, and neither the HTTP server nor another driver', () => {
    const env = { DATABASE_URL: `sqlite:${join(dir(), 'app.db')}` }
    const migrated = spawnSync(process.execPath, [BIN, 'migrate'], { env: childEnv(env), encoding: 'utf8' })
    expect(migrated.status, migrated.stderr).toBe(0)
    const { packages } = modulesLoadedBy(['users', 'list'], env, dir())
    expect(packages).toContain('better-sqlite3')
    for (const name of [...SERVER_PACKAGES, ...OTHER_DRIVERS]) expect(packages, name).not.toContain(name)
  })

  it('tessera keys generate loads neither the HTTP server nor any database driver', () => {
    const { packages, paths } = modulesLoadedBy(
      ['keys', 'generate', '--out', join(dir(), 'key.pem')],
      {},
      dir(),
    )
    expect(paths.some((path) => path.endsWith('/src/commands/keys.ts'))).toBe(true)
    expect(packages).toContain('jose')
    for (const name of [...SERVER_PACKAGES, ...OTHER_DRIVERS, 'better-sqlite3', 'kysely'])
      expect(packages, name).not.toContain(name)
  })

  it("the record does hold the server when a module loads it: the bundle's file of serve imports Fastify", () => {
    const record = join(dir(), 'serve.txt')
    const [serveFile] =
      Object.entries(modulesOfBundle).find(([, held]) => held.includes('src/commands/serve.ts')) ?? []
    expect(serveFile).toBeDefined()
    const serveModule = new URL(`${serveFile}`, BUNDLE).href
    const loaded = spawnSync(
      process.execPath,
      ['--import', RECORDER, '--input-type=module', '-e', `await import(${JSON.stringify(serveModule)})`],
      { env: childEnv({ TESSERA_LOADED_MODULES: record }), encoding: 'utf8', timeout: 30_000 },
    )
    expect(loaded.status, loaded.stderr).toBe(0)
    expect(loadedIn(record).packages).toContain('fastify')
  })
})
