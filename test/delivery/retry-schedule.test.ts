import { describe, expect, it } from 'vitest'
import { MAX_RETRY_DELAY_MS, nextAttemptAt } from '../../src/delivery/retry-schedule.js'

describe('the retry schedule', () => {
  it('waits the retry seconds (MAIL_RETRY_SECONDS, WEBHOOK_RETRY_SECONDS) after the first failure, doubling after each further one, at most an hour', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 8, 50, 1000].map(
      (failures) => nextAttemptAt(1_000, failures, 30, () => 0) - 1_000,
    )
    expect(waits).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600].map((s) => s * 1000))
    expect(nextAttemptAt(0, 1, 3600, () => 0)).toBe(MAX_RETRY_DELAY_MS)
  })

  it('shortens each wait by up to a fifth at random, never lengthens it', () => {
    expect(nextAttemptAt(0, 1, 100, () => 0.999_999)).toBe(80_000)
    expect(nextAttemptAt(0, 1, 100, () => 0.5)).toBe(90_000)
    expect(nextAttemptAt(0, 20, 100, () => 0.5)).toBe(MAX_RETRY_DELAY_MS * 0.9)
  })
})
