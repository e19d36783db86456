import { once } from 'node:events'
import { crc32, createDeflate } from 'node:zlib'

/** PNGs made byte by byte, for what an encoder would not write: a header alone, or a huge image in a small file. */

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** A PNG chunk: length, type, data and CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

export interface PngShape {
  width: number
  height: number
  /** 1 grey, 2 grey and alpha, 3 RGB, 4 RGBA; 4 unless told. */
  channels?: 1 | 2 | 3 | 4
  /** Bits per channel, 8 unless told. */
  depth?: 8 | 16
  /** Adam7 interlacing; false unless told. */
  interlaced?: boolean
}

const COLOUR_TYPE = { 1: 0, 2: 4, 3: 2, 4: 6 } as const

function header({ width, height, channels = 4, depth = 8, interlaced = false }: PngShape): Buffer {
  const data = Buffer.alloc(13)
  data.writeUInt32BE(width, 0)
  data.writeUInt32BE(height, 4)
  data.set([depth, COLOUR_TYPE[channels], 0, 0, interlaced ? 1 : 0], 8)
  return pngChunk('IHDR', data)
}

/**
 * A PNG of a few bytes whose header declares `shape` and whose data is one empty zlib stream: what a decoder reads
 * before deciding whether to decode (a decompression bomb's header).
 */
export function pngDeclaring(shape: PngShape): Buffer {
  return Buffer.concat([
    SIGNATURE,
    header(shape),
    pngChunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** Adam7's passes: where each starts and how far apart its pixels are (x, y, step x, step y). */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const

/**
 * A whole, valid PNG of `shape`, every pixel zero (transparent black), its data deflated as it is made: 65,535 × 600
 * RGBA, 157 MB decoded, is a 153 KB file, and is never held decoded here.
 */
export async function blankPng(shape: PngShape): Promise<Buffer> {
  const { width, height, channels = 4, depth = 8, interlaced = false } = shape
  const bytesPerPixel = (channels * depth) / 8
  // the rows of the image, or of each pass of Adam7: a filter byte (0, none) and the row's pixels
  const rows: { width: number; count: number }[] = interlaced
    ? ADAM7.map(([x, y, stepX, stepY]) => ({
        width: Math.max(0, Math.ceil((width - x) / stepX)),
        count: Math.max(0, Math.ceil((height - y) / stepY)),
      })).filter((pass) => pass.width > 0 && pass.count > 0)
    : [{ width, count: height }]
  const deflate = createDeflate({ level: 9 })
  const chunks: Buffer[] = []
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = once(deflate, 'end')
  for (const pass of rows) {
    const row = Buffer.alloc(1 + pass.width * bytesPerPixel)
    for (let i = 0; i < pass.count; i++) {
      if (!deflate.write(row)) await once(deflate, 'drain')
    }
  }
  deflate.end()
  await ended
  return Buffer.concat([
    SIGNATURE,
    header(shape),
    pngChunk('IDAT', Buffer.concat(chunks)),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}
