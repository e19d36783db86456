import type { SqlResult } from '../sql/sql-database.js'

/** What the writer thread starts with (its workerData). */
export interface WriterThreadData {
  /** The module of the better-sqlite3 build for this Node.js (see better-sqlite3.ts). */
  driver: string
  filename: string
  /** Run on the thread's connection when it opens. */
  pragmas: string[]
}

/** One statement and its values. */
export type QueuedStatement = [sql: string, parameters: readonly unknown[]]

/** One write: its statements (most often one), run in order in one savepoint, so that all or none take effect. */
export type QueuedWrite = QueuedStatement[]

/** To the thread: a group of writes to commit together, or 'close' (close the connection, then end). */
export type WriterRequest = QueuedWrite[] | 'close'

/** An error as it crosses from the thread: SQLite's code (SQLITE_CONSTRAINT_UNIQUE …) travels with the message. */
export interface ThreadError {
  message: string
  code?: string
}

/**
 * From the thread: the outcome of each write of the group, in order (the group was committed), the results of its
 * statements or its error; an error that failed the whole group; `fatal` when the connection could not be opened (the
 * thread then ends); `closed` after 'close'.
 */
export type WriterReply =
  | { outcomes: Array<{ results: SqlResult[] } | { error: ThreadError }> }
  | { error: ThreadError }
  | { fatal: ThreadError }
  | { closed: true }
