import { readFileSync } from 'node:fs'

/**
 * The process's limit of open files (Node raises the soft limit to the hard one as it starts), from
 * /proc/self/limits; null where that cannot be read (not Linux) or there is no limit. Read once at start by the
 * composition root, which hands it to the connection guard (MAX_CONNECTIONS when unset).
 */
export function readOpenFileLimit(): number | null {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
    return match?.[1] === undefined ? null : Number(match[1])
  } catch {
    return null
  }
}
