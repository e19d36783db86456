import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { imageType, reencodeAvatar } from '../../src/avatars/avatar-image.js'
import { AvatarImageTooLargeError, UnsupportedImageError } from '../../src/errors.js'
import { blankPng, type PngShape, pngDeclaring } from './png-files.js'

const GPS = {
  GPSLatitudeRef: 'N',
  GPSLatitude: '48/1 51/1 2964/100',
  GPSLongitudeRef: 'E',
  GPSLongitude: '2/1 17/1 4008/100',
}
const XMP =
  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" dc:creator="Ada"/></rdf:RDF></x:xmpmeta>'

/** A photo as a phone makes one: a JPEG with EXIF (camera, GPS position), an ICC profile and XMP. */
function phoneJpeg(width = 2000, height = 1000): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#c03020' } })
    .jpeg()
    .withExif({ IFD0: { Make: 'Phone', Model: 'Camera 9' }, IFD3: GPS })
    .withIccProfile('p3')
    .withXmp(XMP)
    .toBuffer()
}

/** The traces metadata leaves in a file: EXIF, ICC, XMP and IPTC segments or chunks. */
const METADATA_MARKERS = [
  'Exif',
  'ICC_PROFILE',
  'iCCP',
  'eXIf',
  'http://ns.adobe.com/xap',
  'Photoshop 3.0',
  'GPS',
]

async function expectNoMetadata(data: Buffer): Promise<void> {
  const metadata = await sharp(data).metadata()
  expect(metadata.exif).toBeUndefined()
  expect(metadata.icc).toBeUndefined()
  expect(metadata.xmp).toBeUndefined()
  expect(metadata.iptc).toBeUndefined()
  expect(metadata.comments).toBeUndefined()
  for (const marker of METADATA_MARKERS) expect(data.includes(marker), marker).toBe(false)
}

describe('imageType: the type from the first bytes alone', () => {
  it('knows JPEG, PNG and WebP by their magic numbers', async () => {
    const make = (format: 'jpeg' | 'png' | 'webp') =>
      sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
        .toFormat(format)
        .toBuffer()
    expect(imageType(await make('jpeg'))).toBe('image/jpeg')
    expect(imageType(await make('png'))).toBe('image/png')
    expect(imageType(await make('webp'))).toBe('image/webp')
    expect(imageType(Buffer.from([0xff, 0xd8, 0xff]))).toBe('image/jpeg')
    expect(imageType(Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'))).toBe('image/webp')
  })

  it('refuses everything else: HTML, SVG, GIF, TIFF, a RIFF that is not WebP, too few bytes', async () => {
    const gif = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
      .gif()
      .toBuffer()
    const tiff = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
      .tiff()
      .toBuffer()
    for (const bytes of [
      Buffer.from('<!doctype html><script>alert(1)</script>'),
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      gif,
      tiff,
      Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'),
      Buffer.from([0xff, 0xd8]),
      Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      Buffer.alloc(0),
    ]) {
      expect(imageType(bytes)).toBeNull()
    }
  })
})

describe('reencodeAvatar', () => {
  it('a JPEG with EXIF GPS, an ICC profile and XMP comes back without any metadata', async () => {
    const photo = await phoneJpeg()
    const before = await sharp(photo).metadata()
    expect(before.exif).toBeDefined()
    expect(before.icc).toBeDefined()
    expect(before.xmp).toBeDefined()
    expect(photo.includes('Exif')).toBe(true)

    const avatar = await reencodeAvatar(photo)

    expect(avatar.contentType).toBe('image/jpeg')
    expect(imageType(avatar.data)).toBe('image/jpeg')
    await expectNoMetadata(avatar.data)
  })

  it('2000×1000 becomes a centred 512×512 square; a smaller image the square of its shorter side', async () => {
    const wide = await sharp((await reencodeAvatar(await phoneJpeg(2000, 1000))).data).metadata()
    expect([wide.width, wide.height]).toEqual([512, 512])
    const small = await sharp(
      (
        await reencodeAvatar(
          await sharp({ create: { width: 100, height: 60, channels: 3, background: '#0f0' } })
            .png()
            .toBuffer(),
        )
      ).data,
    ).metadata()
    expect([small.width, small.height]).toEqual([60, 60])
  })

  it('turns the image upright by its EXIF orientation before the orientation is dropped', async () => {
    // left half red, right half blue, stored 200×100 with orientation 6: shown turned a quarter clockwise, red on top
    const raw = Buffer.alloc(200 * 100 * 3)
    for (let y = 0; y < 100; y++) {
      for (let x = 0; x < 200; x++) raw[(y * 200 + x) * 3 + (x < 100 ? 0 : 2)] = 255
    }
    const stored = await sharp(raw, { raw: { width: 200, height: 100, channels: 3 } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer()
    const avatar = await reencodeAvatar(stored)
    const { data, info } = await sharp(avatar.data).raw().toBuffer({ resolveWithObject: true })
    expect([info.width, info.height]).toEqual([100, 100])
    const pixel = (x: number, y: number) => [...data.subarray((y * 100 + x) * 3, (y * 100 + x) * 3 + 3)]
    const [topRed, , topBlue] = pixel(85, 15)
    const [bottomRed, , bottomBlue] = pixel(15, 85)
    expect(topRed).toBeGreaterThan(200)
    expect(topBlue).toBeLessThan(60)
    expect(bottomBlue).toBeGreaterThan(200)
    expect(bottomRed).toBeLessThan(60)
    expect((await sharp(avatar.data).metadata()).orientation).toBeUndefined()
  })

  it('a PNG with transparency stays a PNG with its alpha channel, and loses its text chunks', async () => {
    const png = await sharp({
      create: { width: 300, height: 200, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 0.5 } },
    })
      .png()
      .withExif({ IFD3: GPS })
      .withXmp(XMP)
      .toBuffer()
    expect((await sharp(png).metadata()).exif).toBeDefined()
    const avatar = await reencodeAvatar(png)
    expect(avatar.contentType).toBe('image/png')
    const metadata = await sharp(avatar.data).metadata()
    expect(metadata.format).toBe('png')
    expect(metadata.hasAlpha).toBe(true)
    expect([metadata.width, metadata.height]).toEqual([200, 200])
    await expectNoMetadata(avatar.data)
    const { data } = await sharp(avatar.data).raw().toBuffer({ resolveWithObject: true })
    expect(data[3]).toBeGreaterThan(100)
    expect(data[3]).toBeLessThan(160)
  })

  it('a WebP stays a WebP, without its metadata', async () => {
    const webp = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#123456' } })
      .webp()
      .withExif({ IFD0: { Make: 'Phone' }, IFD3: GPS })
      .withIccProfile('p3')
      .toBuffer()
    expect((await sharp(webp).metadata()).exif).toBeDefined()
    const avatar = await reencodeAvatar(webp)
    expect(avatar.contentType).toBe('image/webp')
    const metadata = await sharp(avatar.data).metadata()
    expect([metadata.format, metadata.width, metadata.height]).toEqual(['webp', 512, 512])
    await expectNoMetadata(avatar.data)
  })

  it('refuses an HTML file named .png with the 415 of an unsupported image', async () => {
    const html = Buffer.from('<!doctype html><title>x</title><script>alert(document.cookie)</script>')
    const refusal = reencodeAvatar(html)
    await expect(refusal).rejects.toBeInstanceOf(UnsupportedImageError)
    await expect(refusal).rejects.toMatchObject({
      statusCode: 415,
      message: 'The avatar must be a JPEG, PNG or WebP image',
    })
  })

  it('refuses bytes that start like an image and do not decode, and a GIF or an SVG', async () => {
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#fff' } })
      .png()
      .toBuffer()
    const gif = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
      .gif()
      .toBuffer()
    for (const bytes of [
      Buffer.concat([png.subarray(0, 8), Buffer.from('not a png at all, only its signature')]),
      png.subarray(0, png.length / 2),
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0]),
      Buffer.from('RIFF\0\0\0\0WEBPVP8 garbage', 'latin1'),
      gif,
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'),
    ]) {
      await expect(reencodeAvatar(bytes)).rejects.toBeInstanceOf(UnsupportedImageError)
    }
  })

  it('a PNG is turned upright by its EXIF orientation too (cut to its square before the turn)', async () => {
    // as the JPEG above: left half red, right half blue, 200×100 with orientation 6, red on top once shown
    const raw = Buffer.alloc(200 * 100 * 3)
    for (let y = 0; y < 100; y++) {
      for (let x = 0; x < 200; x++) raw[(y * 200 + x) * 3 + (x < 100 ? 0 : 2)] = 255
    }
    const stored = await sharp(raw, { raw: { width: 200, height: 100, channels: 3 } })
      .png()
      .withMetadata({ orientation: 6 })
      .toBuffer()
    expect((await sharp(stored).metadata()).orientation).toBe(6)
    const avatar = await reencodeAvatar(stored)
    expect(avatar.contentType).toBe('image/png')
    const { data, info } = await sharp(avatar.data).raw().toBuffer({ resolveWithObject: true })
    expect([info.width, info.height]).toEqual([100, 100])
    const pixel = (x: number, y: number) =>
      [...data.subarray((y * 100 + x) * info.channels, (y * 100 + x) * info.channels + 3)] as number[]
    expect(pixel(85, 15)).toEqual([255, 0, 0])
    expect(pixel(15, 85)).toEqual([0, 0, 255])
    expect((await sharp(avatar.data).metadata()).orientation).toBeUndefined()
  })
})

describe("reencodeAvatar: the decoder's memory (R4.23.2, R4.23.6)", () => {
  const TOO_LARGE = {
    statusCode: 413,
    message:
      'The avatar must be at most 40 megapixels and 16,384 pixels on a side (16 megapixels if interlaced or progressive, 8 at 16 bits per channel)',
  }

  /**
   * Each shape is refused from its header: the file is a header and an empty zlib stream, which would not decode,
   * so a 413 (not the 415 of a file that does not decode) says that nothing was decoded.
   */
  it.each<[string, PngShape]>([
    ['over 40 megapixels: 10,000 × 10,000', { width: 10_000, height: 10_000 }],
    ['over 40 megapixels at 16,384 wide: 16,384 × 2,442', { width: 16_384, height: 2_442 }],
    ["a side over 16,384: 65,535 × 600 (39 MP), the issue's bomb", { width: 65_535, height: 600 }],
    ['a side over 16,384: 16,385 × 1', { width: 16_385, height: 1 }],
    ['a side over 16,384, tall: 1 × 16,385', { width: 1, height: 16_385 }],
    ['interlaced, over 16 megapixels: 4,001 × 4,000', { width: 4_001, height: 4_000, interlaced: true }],
    [
      'interlaced at 16 bits, over 8 megapixels: 2,829 × 2,829',
      { width: 2_829, height: 2_829, depth: 16, interlaced: true },
    ],
  ])('refuses from its header, with a 413: %s', async (_, shape) => {
    const header = pngDeclaring(shape)
    expect(header.length).toBeLessThan(100)
    const refusal = reencodeAvatar(header)
    await expect(refusal).rejects.toBeInstanceOf(AvatarImageTooLargeError)
    await expect(refusal).rejects.toMatchObject(TOO_LARGE)
  })

  it('refuses a progressive JPEG over 16 megapixels (4,001 × 4,000) with the 413; 4,000 × 4,000 is taken', async () => {
    const progressive = (width: number) =>
      sharp({ create: { width, height: 4_000, channels: 3, background: '#336699' } })
        .jpeg({ progressive: true })
        .toBuffer()
    await expect(reencodeAvatar(await progressive(4_001))).rejects.toMatchObject(TOO_LARGE)
    const avatar = await reencodeAvatar(await progressive(4_000))
    expect((await sharp(avatar.data).metadata()).width).toBe(512)
  })

  it.each<[string, PngShape]>([
    ['16,384 pixels wide', { width: 16_384, height: 64 }],
    ['16,384 pixels tall', { width: 64, height: 16_384 }],
    ['interlaced, 16 megapixels: 4,000 × 4,000', { width: 4_000, height: 4_000, interlaced: true }],
    [
      'interlaced at 16 bits, 8 megapixels: 2,828 × 2,828',
      { width: 2_828, height: 2_828, depth: 16, interlaced: true },
    ],
  ])('takes an image at the limits: %s', async (_, shape) => {
    const avatar = await reencodeAvatar(await blankPng(shape))
    const side = Math.min(512, shape.width, shape.height)
    const metadata = await sharp(avatar.data).metadata()
    expect([metadata.format, metadata.width, metadata.height]).toEqual(['png', side, side])
  })
})
