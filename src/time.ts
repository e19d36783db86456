/**
 * The two kinds of time the service reads besides the service clock (src/clock.ts). The service clock is the "now" of
 * the domain: token lifetimes, the audit trail, the login throttle; it is injected, so a test fixes it. These two are
 * not "now" in that sense and must not follow a fixed or moved clock:
 *
 * - Wall-clock deadlines that another machine checks: a Redis write script compares the deadline it is given with
 *   Redis's own `TIME`, on another machine. Only the real wall clock can be set against another machine's (through
 *   the offset measured with wallClockNow), so these are read from it, never from an injected clock: a test that
 *   fixes the service clock in the past would otherwise have every write refused as too late.
 * - Monotonic durations: how long something took or waited (the Argon2 queue, store call latencies, a copy). A wall
 *   clock can step (NTP, an operator) in between; this clock only moves forward, and only differences of it mean
 *   anything.
 *
 * These and src/clock.ts are the only modules of src/ that read the time (test/clock-reads.test.ts checks it).
 */

/** The wall clock now, in epoch milliseconds: only to set against another machine's clock (Redis's TIME). */
export function wallClockNow(): number {
  return Date.now()
}

/**
 * The wall-clock instant `afterMs` from now, in epoch milliseconds: a deadline another machine checks against its own
 * clock (a Redis write script, against TIME, once the measured offset is added).
 */
export function wallClockDeadline(afterMs: number): number {
  return Date.now() + afterMs
}

/** Milliseconds on the monotonic clock, for durations: only the difference of two readings means anything. */
export function monotonicNow(): number {
  return performance.now()
}
