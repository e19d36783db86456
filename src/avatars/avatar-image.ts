import type { Metadata, Sharp, SharpConstructor } from 'sharp'
import { AvatarImageTooLargeError, UnsupportedImageError } from '../errors.js'
import type { StoredAvatar } from '../storage/stores.js'
import { heapRelease } from './heap-release.js'

/** The types an avatar is stored and served as: those it may be uploaded as, each kept in its own family. */
export type AvatarContentType = StoredAvatar['contentType']

/** An avatar as it is stored: the re-encoded image, never the uploaded bytes. */
export interface AvatarImage {
  contentType: AvatarContentType
  data: Buffer
}

/** docs/api.md §4.23: the largest file an avatar is made from, upload or provider picture alike (2 MB). */
export const AVATAR_MAX_BYTES = 2 * 1024 * 1024

/** The side of the square an avatar is cut to; a smaller image is cut to the square of its shorter side. */
export const AVATAR_SIDE = 512

/**
 * The most pixels an input may declare. A small file can declare a huge image (a decompression bomb: 40 MP of one
 * colour is a 160 KB PNG that decodes to 160 MB); such an image is refused from its header, before anything is
 * decoded. 40 MP is more than a phone photo that fits in 2 MB.
 */
export const AVATAR_MAX_PIXELS = 40_000_000

/**
 * The longest side an input may declare. libvips decodes a JPEG or PNG row by row and keeps up to 512 rows of the
 * image's full width in the line cache in front of its decoder, so a row's length, not the pixel count, sizes that
 * memory: a 153 KB PNG of 65,535 × 600 pixels (39 MP) took 350 MB to decode, against 53 MB for 6,324 × 6,324
 * (measured). 16,384 is also the most a WebP can have.
 */
export const AVATAR_MAX_SIDE = 16_384

/**
 * The most pixels of an interlaced PNG or a progressive JPEG, which are decoded whole, not row by row: an
 * interlaced PNG into a buffer of the whole image, a progressive JPEG into the coefficients of every block. At this
 * limit an interlaced RGBA PNG took 88 MB, a progressive JPEG 52 MB (98 MB without chroma subsampling, 133 MB in
 * CMYK); half of it at 16 bits per channel, where an interlaced PNG of 16 MP took 171 MB (measured). 16 MP is more
 * than the 12 MP of a phone's photo (4,032 × 3,024).
 */
export const AVATAR_MAX_WHOLE_DECODE_PIXELS = 16_000_000

/** JPEG starts FF D8 FF; PNG with its eight-byte signature; WebP is a RIFF container of form type `WEBP`. */
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/**
 * The type of an image from its first bytes (its magic number), or null for anything else: the file's name and the
 * type the client declared are never read, so an HTML page named `.png` is not an image.
 */
export function imageType(bytes: Uint8Array): AvatarContentType | null {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buffer.length >= 3 && buffer[0] === 0xff && buffer[1] === 0xd8 && buffer[2] === 0xff)
    return 'image/jpeg'
  if (buffer.length >= 8 && buffer.subarray(0, 8).equals(PNG_SIGNATURE)) return 'image/png'
  if (
    buffer.length >= 12 &&
    buffer.toString('latin1', 0, 4) === 'RIFF' &&
    buffer.toString('latin1', 8, 12) === 'WEBP'
  ) {
    return 'image/webp'
  }
  return null
}

/** What libvips must have decoded each type with: a file whose bytes say one type is never read as another. */
const DECODER: Readonly<Record<AvatarContentType, string>> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/webp': 'webp',
}

/**
 * The avatar made from an uploaded file: decoded, turned upright by its EXIF orientation, cut to a centred square of
 * at most 512 pixels and encoded again in its own family (JPEG, PNG, WebP). Nothing of the file but its pixels
 * survives: sharp writes no EXIF (a photo's GPS position, its camera, its time), XMP, IPTC, ICC profile or comment
 * unless told to keep them, and it is never told. Throws UnsupportedImageError for bytes that are not one of the
 * three types, or that say they are and do not decode (truncated, corrupt), and AvatarImageTooLargeError, from the
 * header and before anything is decoded, for an image over the limits above.
 *
 * Memory (docs/api.md R4.23.6): with those limits one decode takes at most about 135 MB, and the C heap's free pages
 * are given back to the system after each one. The caller decodes one image at a time.
 */
export async function reencodeAvatar(bytes: Buffer): Promise<AvatarImage> {
  const contentType = imageType(bytes)
  if (contentType === null) throw new UnsupportedImageError()
  const sharp = await loadSharp()
  const header = await readHeader(sharp, bytes, contentType)
  refuseOversized(header)
  const { width, height } = header
  try {
    const image = sharp(bytes, { limitInputPixels: AVATAR_MAX_PIXELS })
    // the shorter side, at most 512: a smaller image is cut to a square, never enlarged (a turn swaps the sides,
    // not the shorter one)
    const side = Math.min(AVATAR_SIDE, width, height)
    if (contentType === 'image/png') {
      // a PNG has no reduced decoding: cut to its centred square first, so that only the decoder's rows are as
      // wide as the image, and every step after it as narrow as the square (65,535 × 600: 132 MB instead of 350).
      // Cut before the turn is applied, which then happens on the small result: the centred square of a turned
      // image is the turned centred square. (A JPEG or WebP is resized whole, which lets libjpeg and libwebp decode
      // it already reduced.)
      const crop = Math.min(width, height)
      image.extract({
        left: Math.floor((width - crop) / 2),
        top: Math.floor((height - crop) / 2),
        width: crop,
        height: crop,
      })
    }
    const square = image
      // the orientation is applied to the pixels before the EXIF that holds it is dropped
      .autoOrient()
      .resize(side, side, { fit: 'cover', position: 'centre' })
    return { contentType, data: await encode(square, contentType).toBuffer() }
  } catch (error) {
    throw new UnsupportedImageError(error)
  } finally {
    await (await heapRelease()).release()
  }
}

/** What the header says: read without decoding a pixel, and without libvips' pixel limit (checked next, here). */
async function readHeader(
  sharp: SharpConstructor,
  bytes: Buffer,
  contentType: AvatarContentType,
): Promise<Metadata & { width: number; height: number }> {
  let header: Metadata
  try {
    header = await sharp(bytes, { limitInputPixels: false }).metadata()
  } catch (error) {
    throw new UnsupportedImageError(error)
  }
  if (header.format !== DECODER[contentType]) {
    throw new UnsupportedImageError(new Error(`decoded as ${header.format}, not ${contentType}`))
  }
  const { width, height } = header
  if (!(width > 0 && height > 0)) throw new UnsupportedImageError(new Error('no dimensions'))
  return header as Metadata & { width: number; height: number }
}

/** Throws AvatarImageTooLargeError for an image whose header declares more than the decoder may be asked for. */
function refuseOversized({
  width,
  height,
  isProgressive,
  depth,
}: Metadata & { width: number; height: number }): void {
  const pixels = width * height
  const deep = depth !== 'uchar'
  const declared = `${width} × ${height}${deep ? ', 16 bits per channel' : ''}${isProgressive ? ', interlaced or progressive' : ''}`
  const refuse = (why: string) => new AvatarImageTooLargeError(new Error(`${declared}: ${why}`))
  if (pixels > AVATAR_MAX_PIXELS) throw refuse('over 40 megapixels')
  if (Math.max(width, height) > AVATAR_MAX_SIDE) throw refuse(`a side over ${AVATAR_MAX_SIDE} pixels`)
  const wholeLimit = deep ? AVATAR_MAX_WHOLE_DECODE_PIXELS / 2 : AVATAR_MAX_WHOLE_DECODE_PIXELS
  if (isProgressive === true && pixels > wholeLimit)
    throw refuse(`over ${wholeLimit / 1_000_000} megapixels decoded whole`)
}

/** The output in the input's family; sharp's defaults strip every metadata field. */
function encode(image: Sharp, contentType: AvatarContentType): Sharp {
  switch (contentType) {
    case 'image/jpeg':
      return image.jpeg({ quality: 85 })
    case 'image/png':
      return image.png()
    case 'image/webp':
      return image.webp({ quality: 85 })
  }
}

let loading: Promise<SharpConstructor> | null = null

/**
 * sharp, loaded at the first avatar: it takes a second to load libvips, which a service that never sees an avatar,
 * and every command, need not pay. Process-wide settings, since nothing else here uses sharp: libvips may run no
 * loader but those of the three types, so that no SVG, TIFF, HEIF or PDF parser ever reads a client's bytes whatever
 * the type check above lets through; its cache is off, since each avatar is decoded once and cached operations would
 * only hold memory (about 90 MB after a few 40-megapixel PNGs, measured); and it runs one thread per image (sharp's
 * default with glibc's allocator, set here whatever the allocator), since each thread of libvips holds buffers of
 * its own. The C heap's thresholds are set with it (heap-release.ts).
 */
function loadSharp(): Promise<SharpConstructor> {
  loading ??= Promise.all([import('sharp'), heapRelease()]).then(([{ default: sharp }]) => {
    sharp.block({ operation: ['VipsForeignLoad'] })
    sharp.unblock({ operation: ['VipsForeignLoadJpeg', 'VipsForeignLoadPng', 'VipsForeignLoadWebp'] })
    sharp.cache(false)
    sharp.concurrency(1)
    return sharp
  })
  return loading
}
