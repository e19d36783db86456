import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * Issue 19, "One clock": the service and its commands read the time from the injected Clock; the two other kinds of
 * time have one module with names that say what they are. So the time is read in src/ only in these files, each for
 * the reason given.
 */
const ALLOWED: Readonly<Record<string, string>> = {
  'clock.ts': 'the service clock itself: systemClock, which everything else is handed',
  'time.ts':
    'wall-clock deadlines that another machine (Redis, by TIME) checks, and monotonic durations: named, in one module',
  'storage/sqlite/apply-pragmas.js':
    'the busy retry of the SQLite writer thread, which runs this JavaScript file and cannot import src/time.ts',
}

/** The ways of reading the time: the current instant, a monotonic reading, and Date called with no argument. */
const READS: readonly RegExp[] = [
  /\bDate\.now\b/,
  /\bperformance\.now\b/,
  /\bperformance\.timeOrigin\b/,
  /\bprocess\.hrtime\b/,
  /\bnew\s+Date\s*\(\s*\)/,
  /\bnew\s+Date\b(?!\s*\()/,
  /(?<!\bnew\s+)\bDate\s*\(\s*\)/,
]

const SRC = resolve(import.meta.dirname, '../src')

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(path) : [path]
  })
}

/** Each line of `text` that reads the time, as `<line number>: <line>`. */
function timeReads(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, index) => (READS.some((read) => read.test(line)) ? [`${index + 1}: ${line.trim()}`] : []))
}

describe('reading the time', () => {
  it('the patterns find every way of reading it, and not formatting a given time', () => {
    for (const line of [
      'const t = Date.now()',
      'now: Date.now,',
      'const started = performance.now()',
      'const origin = performance.timeOrigin',
      'const [s, ns] = process.hrtime()',
      'process.hrtime.bigint()',
      'const at = new Date().toISOString()',
      'const d = new Date',
      'const text = Date()',
    ])
      expect(timeReads(line), line).toHaveLength(1)
    for (const line of [
      'new Date(epochMs).toISOString()',
      'new Date(clock.now()).toISOString()',
      'Date.parse(text)',
      'check.getUTCDate() === day',
      'clock.now()',
      'monotonicNow()',
    ])
      expect(timeReads(line), line).toEqual([])
  })

  it('src/ reads it only in the clock module, the module of deadlines and durations, and the SQLite busy retry', () => {
    const found: Record<string, string[]> = {}
    for (const file of filesUnder(SRC)) {
      const name = relative(SRC, file).split('\\').join('/')
      const reads = timeReads(readFileSync(file, 'utf8'))
      if (reads.length > 0) found[name] = reads
    }
    const elsewhere = Object.fromEntries(Object.entries(found).filter(([name]) => !(name in ALLOWED)))
    expect(elsewhere, 'read the time from the injected Clock, or name it in src/time.ts').toEqual({})
    // an allowance no longer needed is taken off the list
    expect(Object.keys(found).sort()).toEqual(Object.keys(ALLOWED).sort())
  })
})
