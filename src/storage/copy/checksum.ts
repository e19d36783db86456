import { createHash } from 'node:crypto'

/** What one side holds of the source's rows: how many, and SHA-256 over them in order. */
export interface Checksum {
  count: number
  sha256: string
}

/** SHA-256 over lines fed in order, and how many; streamed, so no side is ever held in memory. */
export function runningChecksum() {
  const hash = createHash('sha256')
  let count = 0
  return {
    add(lines: readonly string[]) {
      for (const line of lines) hash.update(line)
      count += lines.length
    },
    result: (): Checksum => ({ count, sha256: hash.digest('hex') }),
  }
}
