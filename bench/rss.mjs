// Peak resident memory of a process during a phase (Linux): the kernel's high-water mark VmHWM, reset at the start
// of the phase by writing 5 to /proc/<pid>/clear_refs, and VmRSS sampled every 50 ms as well in case the reset is
// not allowed. Elsewhere (no /proc) the figures are null.
import { readFileSync, writeFileSync } from 'node:fs'

const SAMPLE_MS = 50

/**
 * @param {number} pid
 * @returns {{ stop(): number | null }} stop returns the peak in MiB
 */
export function watchPeakRss(pid) {
  let resetWorked = false
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    resetWorked = true
  } catch {
    // not Linux, or not allowed: the samples alone give the peak
  }
  let peakKiB = readStatus(pid, 'VmRSS') ?? 0
  const sample = () => {
    peakKiB = Math.max(peakKiB, readStatus(pid, 'VmRSS') ?? 0)
  }
  const timer = setInterval(sample, SAMPLE_MS)
  return {
    stop() {
      clearInterval(timer)
      sample()
      if (resetWorked) peakKiB = Math.max(peakKiB, readStatus(pid, 'VmHWM') ?? 0)
      return peakKiB === 0 ? null : peakKiB / 1024
    },
  }
}

/**
 * A field of /proc/<pid>/status in KiB, or null.
 * @param {number} pid
 * @param {string} field
 */
function readStatus(pid, field) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)
    return match?.[1] === undefined ? null : Number(match[1])
  } catch {
    return null
  }
}
