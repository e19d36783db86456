import { describe, expect, it } from 'vitest'
import { CommandUsageError } from '../../src/commands/command-errors.js'
import { parseCommandLine } from '../../src/commands/command-line.js'

const OPTIONS = {
  limit: { type: 'string' },
  json: { type: 'boolean' },
  config: { type: 'string', short: 'c' },
} as const

describe('parseCommandLine', () => {
  it('takes a value that starts with a dash as the value of the option before it', () => {
    expect(parseCommandLine(['--limit', '-1', 'x'], OPTIONS)).toMatchObject({
      values: { limit: '-1' },
      positionals: ['x'],
    })
    expect(parseCommandLine(['-c', '-file.json'], OPTIONS).values.config).toBe('-file.json')
    expect(parseCommandLine(['--limit=-5'], OPTIONS).values.limit).toBe('-5')
    // after --, everything is a positional
    expect(parseCommandLine(['--', '--limit', '-1'], OPTIONS).positionals).toEqual(['--limit', '-1'])
  })

  it('says an option that is followed by another option needs a value', () => {
    expect(() => parseCommandLine(['--limit', '--json'], OPTIONS)).toThrow(
      new CommandUsageError('--limit needs a value'),
    )
    expect(() => parseCommandLine(['--limit', '--config=x'], OPTIONS)).toThrow('--limit needs a value')
  })

  it("reports parseArgs's refusals as a CommandUsageError of one printable line", () => {
    let error: unknown
    try {
      parseCommandLine([`--\u001b[31m${'y'.repeat(10_000)}`], OPTIONS)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(CommandUsageError)
    const message = (error as Error).message
    expect(message).toMatch(/^Unknown option '--\\x1b\[31my+/)
    expect(message).not.toContain('\u001b')
    expect(message.length).toBeLessThan(520)
  })
})
