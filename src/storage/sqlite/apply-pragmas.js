// JavaScript, not TypeScript: the SQLite writer thread imports it at run time, from src/ and dist/ alike.

/** @typedef {{ pragma(source: string): unknown }} PragmaConnection */

/** How long a pragma that finds the file locked is retried: the busy timeout the connections are given. */
const BUSY_WAIT_MS = 5_000
const RETRY_EVERY_MS = 10
const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * Applies a connection's settings in order. Switching a new database file to WAL takes a lock for which SQLite
 * does not call its busy handler, so when several processes open a new file at once one of them can get
 * SQLITE_BUSY at once (seen here: 1 start in 300 of four processes; a flaky start of the multi-instance test). A
 * pragma that fails so is retried, for as long as the busy timeout would have waited. Blocking is fine here: it
 * happens while a connection opens, before it serves anything.
 * @param {PragmaConnection} connection
 * @param {readonly string[]} pragmas
 */
export function applyPragmas(connection, pragmas) {
  for (const pragma of pragmas) {
    // the one read of the time in src/ outside src/clock.ts and src/time.ts (test/clock-reads.test.ts): the SQLite
    // writer thread runs this very file and cannot import TypeScript, so the retry keeps its own timer; a bound on
    // a wait while a connection opens, which no clock of the service need fix or move
    const deadline = Date.now() + BUSY_WAIT_MS
    for (;;) {
      try {
        connection.pragma(pragma)
        break
      } catch (error) {
        const code = /** @type {{ code?: unknown } | null} */ (error)?.code
        if (code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error
        Atomics.wait(pause, 0, 0, RETRY_EVERY_MS)
      }
    }
  }
}
