import { lookup } from 'node:dns'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AvatarService, createAvatarService } from '../../src/avatars/avatar-service.js'
import { isPublicAddress } from '../../src/avatars/picture-download.js'
import { systemClock } from '../../src/clock.js'
import { type Backend, backends } from '../support/backends.js'
import { makeCertificate, type TestCertificate } from '../support/certificates.js'
import { registerUser } from '../support/http.js'
import { useTempDir } from '../support/temp-dir.js'
import { startTestService, type TestService } from '../support/test-service.js'

/** What the service logged: its warn lines, fields and message. */
function capturingLog() {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = []
  return {
    lines,
    warn: (fields: Record<string, unknown>, message: string) => lines.push({ fields, message }),
  }
}

/** A provider's picture server over HTTPS, with a route for each way a picture can come or fail to. */
async function startPictureServer(certificate: TestCertificate, photo: Buffer): Promise<Server> {
  const server = createServer(
    { cert: certificate.cert, key: await readFile(certificate.keyFile) },
    (request, response) => {
      const port = (server.address() as AddressInfo).port
      switch (request.url) {
        case '/photo.jpg':
          response.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo)
          return
        case '/moved':
          response.writeHead(302, { location: '/photo.jpg' }).end()
          return
        case '/to-plain-http':
          response.writeHead(302, { location: `http://localhost:${port}/photo.jpg` }).end()
          return
        case '/loop':
          response.writeHead(302, { location: '/loop' }).end()
          return
        case '/declared-too-large':
          response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(3 * 1024 * 1024) })
          response.write(photo)
          return
        case '/endless': {
          // no Content-Length: the cap is seen as the bytes arrive
          response.writeHead(200, { 'content-type': 'image/jpeg' })
          const chunk = Buffer.alloc(64 * 1024)
          const pump = () => {
            while (response.write(chunk)) {
              if (response.writableLength > 8 * 1024 * 1024) return
            }
            response.once('drain', pump)
          }
          response.write(photo)
          pump()
          return
        }
        case '/never':
          // headers never come: the deadline ends it
          return
        case '/page.png':
          response
            .writeHead(200, { 'content-type': 'image/png' })
            .end('<!doctype html><script>alert(1)</script>')
          return
        default:
          response.writeHead(404).end()
      }
    },
  )
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return server
}

describe('importPicture: a provider picture copied through the re-encoding, never hot-linked', () => {
  const dir = useTempDir('avatar-service')
  let service: TestService
  let pictures: Server
  let base: string
  let photo: Buffer
  let userId: string
  const log = capturingLog()
  /** The service as the tests use it: trusting the test certificate, its lookup allowing the loopback. */
  let avatars: AvatarService

  beforeAll(async () => {
    service = await startTestService(backends[0] as Backend)
    userId = (await registerUser(service.app)).id
    const certificate = await makeCertificate(dir.path, 'pictures')
    photo = await sharp({ create: { width: 900, height: 600, channels: 3, background: '#884422' } })
      .jpeg()
      .withExif({ IFD0: { Make: 'Phone' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 2964/100' } })
      .toBuffer()
    pictures = await startPictureServer(certificate, photo)
    base = `https://localhost:${(pictures.address() as AddressInfo).port}`
    avatars = createAvatarService({
      avatars: service.stores.avatars,
      users: service.stores.users,
      clock: systemClock,
      log,
      fetchTimeoutMs: 1_000,
      pictureConnection: { ca: certificate.cert, lookup },
    })
  })
  afterAll(async () => {
    pictures?.closeAllConnections()
    pictures?.close()
    await service?.close()
  })

  it('copies the picture, re-encoded without its metadata, as the account avatar', async () => {
    const id = await avatars.importPicture(userId, `${base}/photo.jpg`)
    expect(id).toMatch(/^[0-9a-f]{32}$/)
    const stored = await avatars.get(id as string)
    expect(stored?.contentType).toBe('image/jpeg')
    const metadata = await sharp(stored?.data).metadata()
    expect([metadata.width, metadata.height, metadata.exif]).toEqual([512, 512, undefined])
    const user = await service.stores.users.findById(userId)
    expect(user?.avatarId).toBe(id)
  })

  it('follows a redirect to HTTPS', async () => {
    expect(await avatars.importPicture(userId, `${base}/moved`)).toMatch(/^[0-9a-f]{32}$/)
  })

  it.each([
    ['a plain HTTP URL', () => `http://localhost:${new URL(base).port}/photo.jpg`, 'http: is not https:'],
    ['a redirect to plain HTTP', () => `${base}/to-plain-http`, 'http: is not https:'],
    ['endless redirects', () => `${base}/loop`, 'more than 3 redirects'],
    [
      'a declared length over 2 MB',
      () => `${base}/declared-too-large`,
      'Content-Length 3145728 is over 2097152',
    ],
    ['a body that goes on past 2 MB', () => `${base}/endless`, 'body over 2097152 bytes'],
    [
      'an HTML page served as image/png',
      () => `${base}/page.png`,
      'The avatar must be a JPEG, PNG or WebP image',
    ],
    ['a 404', () => `${base}/missing.jpg`, 'status 404'],
    ['no URL at all', () => 'not a url', 'Invalid URL'],
  ])('leaves the avatar unset after %s, with a log line, and never throws', async (_case, url, reason) => {
    log.lines.length = 0
    expect(await avatars.importPicture(userId, url())).toBeNull()
    expect(log.lines).toHaveLength(1)
    expect(log.lines[0]?.message).toBe('provider picture not copied; the avatar is left unset')
    expect(log.lines[0]?.fields).toMatchObject({ userId, reason: expect.stringContaining(reason) })
  })

  it('gives up at the deadline when the server does not answer', async () => {
    log.lines.length = 0
    const started = performance.now()
    expect(await avatars.importPicture(userId, `${base}/never`)).toBeNull()
    const waited = performance.now() - started
    expect(waited).toBeGreaterThan(900)
    expect(waited).toBeLessThan(3_000)
    expect(log.lines[0]?.fields.reason).toMatch(/timeout|aborted/i)
  })

  it('stores nothing for an account that does not exist', async () => {
    log.lines.length = 0
    expect(await avatars.importPicture('1234567890', `${base}/photo.jpg`)).toBeNull()
    expect(log.lines[0]?.fields).toMatchObject({ userId: '1234567890' })
  })

  it('by default reaches only public addresses: the loopback by name or by literal is refused', async () => {
    const guarded = createAvatarService({
      avatars: service.stores.avatars,
      users: service.stores.users,
      clock: systemClock,
      log,
    })
    const port = new URL(base).port
    for (const [url, reason] of [
      [`https://localhost:${port}/photo.jpg`, 'localhost resolves to'],
      [`https://127.0.0.1:${port}/photo.jpg`, '127.0.0.1 is not a public address'],
      [`https://[::1]:${port}/photo.jpg`, '::1 is not a public address'],
      ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is not a public address'],
    ] as const) {
      log.lines.length = 0
      expect(await guarded.importPicture(userId, url)).toBeNull()
      expect(log.lines[0]?.fields.reason).toContain(reason)
    }
  })
})

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['140.82.112.3', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.20.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['::', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:8.8.8.8', true],
    ['fd00::1', false],
    ['fe80::1', false],
    ['ff02::1', false],
    ['localhost', false],
  ])('%s: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected)
  })
})
