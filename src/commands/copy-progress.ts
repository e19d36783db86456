import cliProgress from 'cli-progress'
import type { CopyProgress } from '../storage/copy/copy-store.js'

/** Batches between two lines when stderr is not a terminal. */
export const LINE_EVERY_BATCHES = 10

/**
 * A progress bar on a terminal (redrawn in place); elsewhere (a log, a pipe, CI) a plain line every
 * LINE_EVERY_BATCHES batches and one when a phase ends, so a log shows the copy advancing without a line per batch.
 */
export function createCopyProgress(stream: NodeJS.WritableStream & { isTTY?: boolean }): CopyProgress {
  if (stream.isTTY === true) {
    let bar: cliProgress.SingleBar | null = null
    return {
      start(phase, total) {
        bar = new cliProgress.SingleBar(
          {
            stream,
            format: `${phase.padEnd(10)} [{bar}] {percentage}% | {value}/{total} accounts | {duration_formatted} | ETA {eta_formatted}`,
          },
          cliProgress.Presets.shades_classic,
        )
        bar.start(total, 0)
      },
      update(done) {
        bar?.update(done)
      },
      stop() {
        bar?.stop()
        bar = null
      },
    }
  }
  let current = { phase: '', total: 0, done: 0, batches: 0, active: false }
  const line = () => {
    const percent = current.total === 0 ? 100 : Math.floor((current.done / current.total) * 100)
    stream.write(`${current.phase}: ${current.done} of ${current.total} accounts (${percent}%)\n`)
  }
  return {
    start(phase, total) {
      current = { phase, total, done: 0, batches: 0, active: true }
    },
    update(done) {
      current.done = done
      current.batches += 1
      if (current.batches % LINE_EVERY_BATCHES === 0) line()
    },
    stop() {
      if (!current.active) return
      current.active = false
      if (current.batches % LINE_EVERY_BATCHES !== 0 || current.batches === 0) line()
    },
  }
}
