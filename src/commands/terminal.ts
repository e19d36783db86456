import { createInterface } from 'node:readline/promises'
import { PromptCancelledError } from './command-errors.js'

/** What an admin command asks of the operator: prompts on a terminal, or the lines of a pipe. */
export interface Terminal {
  /** True when stdin is a terminal: the command asks, with prompts on stderr. Otherwise it reads stdin. */
  interactive: boolean
  /** Shows `prompt` and reads one line without echoing it (a password). Interactive only. */
  readSecret(prompt: string): Promise<string>
  /** Shows `prompt` and reads one line (a confirmation). Interactive only. */
  ask(prompt: string): Promise<string>
  /** The first line of stdin, without its line ending; null when stdin ends before any character. */
  readLine(): Promise<string | null>
}

/** The terminal of this process: stdin, with prompts written to stderr so that stdout stays the result. */
export function processTerminal(): Terminal {
  const { stdin, stderr } = process
  /** What was typed (or pasted) after the line a prompt took: the next prompt's. */
  const ahead = { text: '' }
  return {
    interactive: stdin.isTTY === true,
    readSecret: (prompt) => readWithoutEcho(stdin, stderr, prompt, ahead),
    async ask(prompt) {
      const lines = createInterface({ input: stdin, output: stderr, terminal: true })
      const closed = new Promise<never>((_, reject) =>
        lines.once('close', () => reject(new PromptCancelledError())),
      )
      try {
        return await Promise.race([lines.question(prompt), closed])
      } finally {
        lines.close()
      }
    },
    readLine: () => readFirstLine(stdin),
  }
}

/**
 * One line typed at a terminal in raw mode, so that the terminal echoes nothing: Enter ends it, Backspace takes
 * back one character, Ctrl-C and Ctrl-D (on an empty line) cancel. What follows the line in the same chunk (a
 * pasted second line) is kept in `ahead` for the next prompt.
 */
function readWithoutEcho(
  stdin: NodeJS.ReadStream,
  output: NodeJS.WriteStream,
  prompt: string,
  ahead: { text: string },
): Promise<string> {
  // echo off before the prompt shows: whoever answers it at once (a paste, a test) is never echoed by the terminal
  stdin.setEncoding('utf8')
  stdin.setRawMode(true)
  output.write(prompt)
  return new Promise((resolve, reject) => {
    let typed: string[] = []
    let finished = false
    const finish = (error: Error | null, rest: string) => {
      finished = true
      ahead.text = rest
      stdin.off('data', onData)
      stdin.setRawMode(false)
      stdin.pause()
      output.write('\n')
      if (error === null) resolve(typed.join(''))
      else reject(error)
    }
    const onData = (chunk: string) => {
      const characters = [...chunk]
      for (const [i, character] of characters.entries()) {
        if (character === '\r' || character === '\n') {
          const rest = characters.slice(i + 1).join('')
          return finish(null, character === '\r' ? rest.replace(/^\n/, '') : rest)
        }
        if (character === '\u0003' || (character === '\u0004' && typed.length === 0))
          return finish(new PromptCancelledError(), '')
        if (character === '\u007f' || character === '\b') typed = typed.slice(0, -1)
        else if (character >= ' ') typed.push(character)
      }
    }
    const waiting = ahead.text
    ahead.text = ''
    if (waiting !== '') onData(waiting)
    if (finished) return
    stdin.on('data', onData)
    stdin.resume()
  })
}

/** Reads stdin up to its first line ending (or its end), and closes it there: nothing after it is read. */
function readFirstLine(stdin: NodeJS.ReadStream): Promise<string | null> {
  return new Promise((resolve, reject) => {
    let buffered = ''
    let any = false
    const done = (line: string | null) => {
      stdin.off('data', onData)
      stdin.off('end', onEnd)
      stdin.off('error', reject)
      // a writer that keeps the pipe open must not keep the command from exiting
      stdin.destroy()
      resolve(line)
    }
    const onData = (chunk: Buffer | string) => {
      any = true
      buffered += chunk.toString()
      const end = buffered.indexOf('\n')
      if (end !== -1) done(buffered.slice(0, end).replace(/\r$/, ''))
    }
    const onEnd = () => done(any ? buffered.replace(/\r$/, '') : null)
    stdin.setEncoding('utf8')
    stdin.on('data', onData)
    stdin.once('end', onEnd)
    stdin.once('error', reject)
  })
}
