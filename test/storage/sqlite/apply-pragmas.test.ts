import { describe, expect, it } from 'vitest'
import { applyPragmas } from '../../../src/storage/sqlite/apply-pragmas.js'

/** A connection whose pragmas fail with `error` the first `failures` times; records what it was asked. */
function connectionFailing(failures: number, error: Error & { code?: string }) {
  const applied: string[] = []
  let left = failures
  return {
    applied,
    pragma(source: string) {
      if (left-- > 0) throw error
      applied.push(source)
    },
  }
}

const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })

describe('applyPragmas', () => {
  it('retries a pragma that finds the file locked (SQLite calls no busy handler for the switch to WAL)', () => {
    const connection = connectionFailing(3, busy)
    applyPragmas(connection, ['journal_mode = WAL', 'synchronous = FULL'])
    expect(connection.applied).toEqual(['journal_mode = WAL', 'synchronous = FULL'])
  })

  it('throws any other error at once', () => {
    const broken = Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' })
    const connection = connectionFailing(1, broken)
    expect(() => applyPragmas(connection, ['journal_mode = WAL'])).toThrow(broken)
    expect(connection.applied).toEqual([])
  })
})
