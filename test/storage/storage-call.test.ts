import { describe, expect, it } from 'vitest'
import { StorageError } from '../../src/errors.js'
import { createStorageCall } from '../../src/storage/storage-call.js'

/** A promise that never settles: a server that stopped answering. */
const never = () => new Promise<never>(() => {})

// docs/api.md R7.2 and R7.3: a 500 means "not done"; a write that may have been done is reported as such
describe('createStorageCall', () => {
  const call = createStorageCall(50)

  async function failure(run: Parameters<typeof call>[1]): Promise<StorageError> {
    try {
      await call('sessions.rotate', run)
    } catch (error) {
      expect(error).toBeInstanceOf(StorageError)
      return error as StorageError
    }
    throw new Error('expected a StorageError')
  }

  it('a timeout before the write commits: failed, the attempt aborted, and commit() refused afterwards', async () => {
    let seen: { signal: AbortSignal; commit(): boolean } | undefined
    const error = await failure(async (attempt) => {
      seen = attempt
      return never()
    })
    expect(error.message).toBe('sessions.rotate failed')
    expect(error.outcomeUnknown).toBe(false)
    expect(seen?.signal.aborted).toBe(true)
    // the statement answers late: the write must not commit now
    expect(seen?.commit()).toBe(false)
  })

  it('a timeout after the write committed: outcome unknown', async () => {
    const error = await failure(async (attempt) => {
      expect(attempt.commit()).toBe(true)
      return never()
    })
    expect(error.outcomeUnknown).toBe(true)
  })

  it('a failure before commit is a plain failure, one after it leaves the outcome unknown', async () => {
    expect((await failure(() => Promise.reject(new Error('ECONNREFUSED')))).outcomeUnknown).toBe(false)
    const afterCommit = await failure(async (attempt) => {
      attempt.commit()
      throw new Error('ECONNRESET')
    })
    expect(afterCommit.outcomeUnknown).toBe(true)
  })

  it('gives the deadline the caller waits until; without a bound, none', async () => {
    const before = Date.now()
    const deadline = await call('users.findById', async (attempt) => attempt.deadline)
    expect(deadline).toBeGreaterThanOrEqual(before + 50)
    expect(deadline).toBeLessThanOrEqual(Date.now() + 50)
    const unbounded = createStorageCall(null)
    expect(await unbounded('users.findById', async (attempt) => attempt.deadline)).toBe(
      Number.POSITIVE_INFINITY,
    )
  })
})
