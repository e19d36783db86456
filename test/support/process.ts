import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { TEST_ENV } from './test-service.js'

export const BIN = fileURLToPath(new URL('../../bin/tessera.js', import.meta.url))

export interface RunningService {
  child: ChildProcess
  url: string
  /** stdout lines so far (JSON log lines). */
  stdout: string[]
  stderr: string[]
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>
}

/** Environment for a child process: the parent's PATH and HOME, the test defaults, then the given variables. */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base = { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', ...TEST_ENV }
  return Object.fromEntries(Object.entries({ ...base, ...env }).filter(([, value]) => value !== undefined))
}

/**
 * `tessera serve` as a real process on a free port; resolves when it logs where it listens. `openFiles` lowers its
 * file-descriptor limit (ulimit -n), for the connection-flood tests.
 */
export async function startProcess(
  env: Record<string, string | undefined>,
  timeoutMs = 60_000,
  openFiles?: number,
): Promise<RunningService> {
  const [command, args] =
    openFiles === undefined
      ? [process.execPath, [BIN, 'serve']]
      : ['/bin/sh', ['-c', `ulimit -n ${openFiles} && exec "$0" "$@"`, process.execPath, BIN, 'serve']]
  const child = spawn(command, args, {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const stdout: string[] = []
  const stderr: string[] = []
  collectLines(child.stdout, stdout)
  collectLines(child.stderr, stderr)
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // the caller gets no handle to stop it with: a process left running would outlive the test run
      child.kill('SIGKILL')
      reject(new Error(`no start-up line within ${timeoutMs} ms: ${stderr.join('\n')}`))
    }, timeoutMs)
    // each line once, and no more once it is found: a service under a flood logs thousands of lines, and a check
    // that read them all again at every chunk kept this process too busy to drain the pipe, whose writes then
    // blocked the service's event loop (the pipelining test's /health p99 went over 1 s)
    let scanned = 0
    const check = () => {
      for (; scanned < stdout.length; scanned++) {
        const match = /listening on (https?:\/\/\S+)/.exec(stdout[scanned] ?? '')
        if (match?.[1]) {
          clearTimeout(timer)
          child.stdout?.off('data', onData)
          resolve(match[1])
          return
        }
      }
    }
    const onData = () => setImmediate(check)
    child.stdout?.on('data', onData)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`exited with ${code} before listening: ${stderr.join('\n')}`))
    })
  })
  return {
    child,
    url,
    stdout,
    stderr,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/** Runs `tessera <args>` to completion; `input`, when given, is its stdin (a pipe), which is otherwise empty. */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  input?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: childEnv(env),
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
  // the command may stop reading (and close its end) before all of it is written
  child.stdin?.on('error', () => {})
  child.stdin?.end(input)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk) => {
    stdout += chunk
  })
  child.stderr?.on('data', (chunk) => {
    stderr += chunk
  })
  const [code] = await once(child, 'exit')
  return { code: code as number | null, stdout, stderr }
}

function collectLines(stream: NodeJS.ReadableStream | null, into: string[]): void {
  let rest = ''
  stream?.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString('utf8')).split('\n')
    rest = lines.pop() ?? ''
    into.push(...lines.filter(Boolean))
  })
}
