import { readFileSync, writeFileSync } from 'node:fs'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/http.js'
import { type RunningService, startProcess } from '../support/process.js'
import { useTempDir } from '../support/temp-dir.js'
import { blankPng } from './png-files.js'

// Issue 31, finding 4 (docs/api.md R4.23.2, R4.23.6): what avatars cost a `tessera serve` process, measured on the
// process itself (its peak resident set, VmHWM, and its RSS sampled), under the attack of the issue: 16 uploads at
// once of a 153 KB PNG that declares 65,535 × 600 RGBA. Before the fix (3d5e153) they took the process from 170 MiB
// to 1,639 MiB, and 1,140 MiB stayed; now they are refused from the header. Then the same with the largest images
// that are decoded (R4.23.2's limits): each decodes, one at a time, and the memory is given back after each. No
// wall-clock bound: the uploads take what a loaded machine gives them, and the wait for the memory to come back ends
// at a deadline.

/** The bound of the issue: the whole process, whatever it decodes. */
const PEAK_LIMIT_MIB = 400
/** "Gives the memory back": how near to its RSS before the uploads the process must come once they are answered. */
const SETTLED_MARGIN_MIB = 48
/** How long the process may take to give its memory back before the test calls it kept. */
const SETTLE_DEADLINE_MS = 30_000
/** How long `tessera serve` may take to start on a loaded 2-core machine. */
const START_MS = 90_000
const TEST_MS = 300_000
const CONCURRENT = 16

const IMAGE_TOO_LARGE =
  'The avatar must be at most 40 megapixels and 16,384 pixels on a side (16 megapixels if interlaced or progressive, 8 at 16 bits per channel)'

function status(pid: number): string {
  return readFileSync(`/proc/${pid}/status`, 'utf8')
}

/** A field of /proc/<pid>/status in MiB (VmRSS: resident now, VmHWM: the most resident since the last reset). */
function mib(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const kib = new RegExp(`${field}:\\s+(\\d+)`).exec(status(pid))?.[1]
  return Number(kib) / 1024
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Answer {
  status: number
  message: string
}

interface Measured {
  answers: Answer[]
  /** RSS before the uploads. */
  before: number
  /** The most resident during the uploads: VmHWM (reset before them) or the highest RSS sampled. */
  peak: number
  /** RSS once it came back within the margin, or when the deadline passed. */
  after: number
}

describe('avatar decoding memory, measured on a tessera serve process (issue 31, finding 4)', () => {
  const dir = useTempDir('avatar-memory')
  let service: RunningService
  let pid: number
  let token: string

  const upload = async (file: Buffer, type: string): Promise<Answer> => {
    const form = new FormData()
    form.append('avatar', new Blob([new Uint8Array(file)], { type }), 'avatar')
    const response = await fetch(`${service.url}/auth/avatar`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    })
    const body = (await response.json()) as { message: string }
    return { status: response.status, message: body.message }
  }

  /** The uploads of `files`, all at once, with the process's memory before, at its peak and after. */
  const measure = async (files: { data: Buffer; type: string }[]): Promise<Measured> => {
    const before = mib(pid, 'VmRSS')
    // resets VmHWM to the current RSS (Linux 4.0 and later): from here it is the peak of these uploads alone
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    let sampled = before
    const sampler = setInterval(() => {
      sampled = Math.max(sampled, mib(pid, 'VmRSS'))
    }, 50)
    let answers: Answer[]
    try {
      answers = await Promise.all(files.map(({ data, type }) => upload(data, type)))
    } finally {
      clearInterval(sampler)
    }
    const peak = Math.max(sampled, mib(pid, 'VmHWM'))
    let after = mib(pid, 'VmRSS')
    for (const deadline = Date.now() + SETTLE_DEADLINE_MS; after > before + SETTLED_MARGIN_MIB; ) {
      if (Date.now() > deadline) break
      await pause(250)
      after = mib(pid, 'VmRSS')
    }
    return { answers, before, peak, after }
  }

  beforeAll(async () => {
    service = await startProcess({ DATA_DIR: dir.path }, START_MS)
    pid = service.child.pid as number
    const registered = await fetch(`${service.url}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: uniqueEmail(), password: PASSWORD }),
    })
    expect(registered.status).toBe(200)
    token = ((await registered.json()) as { data: { access_token: string } }).data.access_token
    // an ordinary avatar first: libvips is loaded and has decoded once before anything is measured
    const photo = await sharp({ create: { width: 1200, height: 900, channels: 3, background: '#c03020' } })
      .jpeg()
      .toBuffer()
    expect(await upload(photo, 'image/jpeg')).toEqual({ status: 200, message: 'Success' })
  }, START_MS + 30_000)
  afterAll(async () => {
    await service?.stop()
  })

  it(
    `${CONCURRENT} uploads at once of a 153 KB PNG declaring 65,535 × 600 RGBA: the process stays under ${PEAK_LIMIT_MIB} MiB and gives the memory back; each is a 413`,
    async () => {
      const hostile = await blankPng({ width: 65_535, height: 600 })
      expect(hostile.length).toBeLessThan(160 * 1024)

      const { answers, before, peak, after } = await measure(
        Array.from({ length: CONCURRENT }, () => ({ data: hostile, type: 'image/png' })),
      )

      const figures = `RSS ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB, ${after.toFixed(0)} MiB after`
      expect(peak, figures).toBeLessThan(PEAK_LIMIT_MIB)
      expect(after, figures).toBeLessThanOrEqual(before + SETTLED_MARGIN_MIB)
      expect(answers).toEqual(Array(CONCURRENT).fill({ status: 413, message: IMAGE_TOO_LARGE }))
    },
    TEST_MS,
  )

  it(
    `${CONCURRENT} uploads at once of the largest images decoded (the widest PNG, 40 MP at 16 bits, interlaced and progressive at 16 MP): under ${PEAK_LIMIT_MIB} MiB, memory given back, each a 200`,
    async () => {
      const largest = [
        // 16,384 pixels wide and 40 MP: the longest rows
        { data: await blankPng({ width: 16_384, height: 2_441 }), type: 'image/png' },
        // 40 MP at 16 bits per channel: the most bytes decoded row by row
        { data: await blankPng({ width: 6_324, height: 6_324, depth: 16 }), type: 'image/png' },
        // 16 MP interlaced, decoded whole
        { data: await blankPng({ width: 4_000, height: 4_000, interlaced: true }), type: 'image/png' },
        // 16 MP progressive CMYK without chroma subsampling: the most coefficients a JPEG of 16 MP keeps
        {
          data: await sharp({ create: { width: 4_000, height: 4_000, channels: 3, background: '#336699' } })
            .toColourspace('cmyk')
            .jpeg({ progressive: true, chromaSubsampling: '4:4:4' })
            .toBuffer(),
          type: 'image/jpeg',
        },
      ]
      for (const { data } of largest) expect(data.length).toBeLessThan(2 * 1024 * 1024)

      const { answers, before, peak, after } = await measure(
        Array.from({ length: CONCURRENT }, (_, i) => largest[i % largest.length] as (typeof largest)[number]),
      )

      const figures = `RSS ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB, ${after.toFixed(0)} MiB after`
      expect(peak, figures).toBeLessThan(PEAK_LIMIT_MIB)
      expect(after, figures).toBeLessThanOrEqual(before + SETTLED_MARGIN_MIB)
      expect(answers).toEqual(Array(CONCURRENT).fill({ status: 200, message: 'Success' }))
    },
    TEST_MS,
  )
})
