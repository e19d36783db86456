/**
 * The service clock: the source of the current time for everything the service and its commands decide by it (token
 * lifetimes, the audit trail, the login throttle, migrations), passed in so that tests can fix it instead of patching
 * globals. The two other kinds of time, wall-clock deadlines another machine checks and monotonic durations, are in
 * src/time.ts.
 */
export interface Clock {
  /** The current time in milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that stands still until moved; for tests. */
export function createFixedClock(
  startMs: number,
): Clock & { advance(ms: number): void; set(ms: number): void } {
  let current = startMs
  return {
    now: () => current,
    advance(ms) {
      current += ms
    },
    set(ms) {
      current = ms
    },
  }
}
