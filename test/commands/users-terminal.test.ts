import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { backends } from '../support/backends.js'
import { call, PASSWORD, registerUser } from '../support/http.js'
import { BIN, childEnv } from '../support/process.js'
import { startTestService, type TestService } from '../support/test-service.js'

/** util-linux `script` runs a command on a pseudo-terminal of its own: stdin is then a TTY, as for an operator. */
const hasScript = spawnSync('script', ['--version']).status === 0

/** `tessera users <args>` on a terminal: what it writes there, and typing into it. */
function onTerminal(args: string[], env: Record<string, string>) {
  const command = [process.execPath, BIN, 'users', ...args].map((word) => `'${word}'`).join(' ')
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  return {
    output: () => output,
    /** Waits until the terminal shows `text` (a prompt), so that typing starts once the command reads. */
    shows: (text: string) =>
      vi.waitFor(() => expect(output).toContain(text), { timeout: 20_000, interval: 20 }),
    type: (text: string) => child.stdin.write(text),
    async exit() {
      // the end of script's stdin is an end of file on the terminal
      child.stdin.end()
      return exited
    },
  }
}

describe.runIf(hasScript)('tessera users on a terminal', () => {
  const backend = backends[0] as (typeof backends)[number]
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend)
  })
  afterAll(() => service?.close())
  const env = () => ({
    DATABASE_URL: service.config.storage.databaseUrl,
    DATA_DIR: service.config.storage.dataDir,
  })
  const login = (email: string, password: string) =>
    call(service.app, 'POST', '/auth/login', { body: { email, password } })

  it('reset-password asks twice without echo; the new password then logs in', async () => {
    const user = await registerUser(service.app)
    const terminal = onTerminal(['reset-password', user.email], env())
    await terminal.shows('New password: ')
    // a typo taken back with Backspace
    terminal.type('terminal passwordX\u007f\r')
    await terminal.shows('The same password again: ')
    terminal.type('terminal password\r')
    await terminal.shows('and change nothing.')
    expect(await terminal.exit()).toBe(0)
    expect(terminal.output()).toContain(`Password of ${user.email} (${user.id}) reset`)
    expect(terminal.output()).not.toContain('terminal password')
    expect((await login(user.email, 'terminal password')).status).toBe(200)
  })

  it('reset-password with two different passwords: exit 1, nothing changed', async () => {
    const user = await registerUser(service.app)
    const terminal = onTerminal(['reset-password', user.email], env())
    await terminal.shows('New password: ')
    terminal.type('first password\r')
    await terminal.shows('The same password again: ')
    terminal.type('second password\r')
    await terminal.shows('tessera users: the two passwords differ; nothing was changed')
    expect(await terminal.exit()).toBe(1)
    expect((await login(user.email, PASSWORD)).status).toBe(200)
  })

  it('reset-password cancelled with Ctrl-C: exit 1, nothing changed', async () => {
    const user = await registerUser(service.app)
    const terminal = onTerminal(['reset-password', user.email], env())
    await terminal.shows('New password: ')
    terminal.type('half typed\u0003')
    await terminal.shows('tessera users: cancelled; nothing was changed')
    expect(await terminal.exit()).toBe(1)
    expect((await login(user.email, PASSWORD)).status).toBe(200)
  })

  it('delete asks for the e-mail address: another answer deletes nothing, the address deletes', async () => {
    const user = await registerUser(service.app)
    const refused = onTerminal(['delete', user.email], env())
    await refused.shows('Type its e-mail address to confirm: ')
    refused.type('y\r')
    await refused.shows('tessera users: not confirmed; nothing was deleted')
    expect(await refused.exit()).toBe(1)
    expect(await service.stores.users.findById(user.id)).not.toBeNull()

    const confirmed = onTerminal(['delete', user.id], env())
    await confirmed.shows(`Delete the account ${user.email} (${user.id}) and its sessions for good?`)
    confirmed.type(`${user.email.toUpperCase()}\r`)
    await confirmed.shows('and change nothing.')
    expect(await confirmed.exit()).toBe(0)
    expect(await service.stores.users.findById(user.id)).toBeNull()
  })
})
