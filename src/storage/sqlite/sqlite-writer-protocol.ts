import type { SqlResult } from '../sql/sql-database.js'

/** What the writer thread starts with (its workerData). */
export interface WriterThreadData {
  /** The module of the better-sqlite3 build for this Node.js (see better-sqlite3.ts). */
  driver: string
  filename: string
  /** Run on the thread's connection when it opens. */
  pragmas: string[]
}

/** One write: its statement and values. */
export type QueuedWrite = [sql: string, parameters: readonly unknown[]]

/** To the thread: a group of writes to commit together, or 'close' (close the connection, then end). */
export type WriterRequest = QueuedWrite[] | 'close'

/** An error as it crosses from the thread: SQLite's code (SQLITE_CONSTRAINT_UNIQUE …) travels with the message. */
export interface ThreadError {
  message: string
  code?: string
}

/**
 * From the thread: the outcome of each write of the group, in order (the group was committed); an error that failed
 * the whole group; `fatal` when the connection could not be opened (the thread then ends); `closed` after 'close'.
 */
export type WriterReply =
  | { outcomes: Array<{ result: SqlResult } | { error: ThreadError }> }
  | { error: ThreadError }
  | { fatal: ThreadError }
  | { closed: true }
