import type { Sharp, SharpConstructor, SharpOptions } from 'sharp'
import { UnsupportedImageError } from '../errors.js'
import type { StoredAvatar } from '../storage/stores.js'

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
 * colour is a 160 KB PNG that decodes to 160 MB); libvips refuses more before it decodes anything. 40 MP is more
 * than a phone photo that fits in 2 MB.
 */
const MAX_INPUT_PIXELS = 40_000_000

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
 * three types, or that say they are and do not decode (truncated, corrupt, or over 40 megapixels).
 */
export async function reencodeAvatar(bytes: Buffer): Promise<AvatarImage> {
  const contentType = imageType(bytes)
  if (contentType === null) throw new UnsupportedImageError()
  const sharp = await loadSharp()
  const options: SharpOptions = { limitInputPixels: MAX_INPUT_PIXELS }
  try {
    const image = sharp(bytes, options)
    const { format, width, height } = await image.metadata()
    if (format !== DECODER[contentType]) throw new Error(`decoded as ${format}, not ${contentType}`)
    // the shorter side, at most 512: a smaller image is cut to a square, never enlarged (a turn swaps the sides,
    // not the shorter one)
    const side = Math.min(AVATAR_SIDE, width, height)
    const square = image
      // the orientation is applied to the pixels before the EXIF that holds it is dropped
      .autoOrient()
      .resize(side, side, { fit: 'cover', position: 'centre' })
    return { contentType, data: await encode(square, contentType).toBuffer() }
  } catch (error) {
    throw new UnsupportedImageError(error)
  }
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
 * and every command, need not pay. Two process-wide settings, since nothing else here uses sharp: libvips may run
 * no loader but those of the three types, so that no SVG, TIFF, HEIF or PDF parser ever reads a client's bytes
 * whatever the type check above lets through; and its cache is off, since each avatar is decoded once and cached
 * operations would only hold memory (about 90 MB after a few 40-megapixel PNGs, measured).
 */
function loadSharp(): Promise<SharpConstructor> {
  loading ??= import('sharp').then(({ default: sharp }) => {
    sharp.block({ operation: ['VipsForeignLoad'] })
    sharp.unblock({ operation: ['VipsForeignLoadJpeg', 'VipsForeignLoadPng', 'VipsForeignLoadWebp'] })
    sharp.cache(false)
    return sharp
  })
  return loading
}
