// The machine a run measured: its figures only mean something next to this.
import { readFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os'

export function describeMachine() {
  return {
    cpu: cpuModel(),
    cores: availableParallelism(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${osName()} (${type()} ${release()})`,
    loadAverageAtStart: loadavg().map((value) => Math.round(value * 100) / 100),
  }
}

function cpuModel() {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))
    if (match?.[1] !== undefined) return match[1].trim()
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? 'unknown'
}

function osName() {
  try {
    const match = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))
    if (match?.[1] !== undefined) return match[1]
  } catch {
    // no os-release
  }
  return process.platform
}
