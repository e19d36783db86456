import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AVATAR_MAX_BYTES, reencodeAvatar } from '../../src/avatars/avatar-image.js'
import { type Backend, backends } from '../support/backends.js'
import { bearer, call, expectError, PASSWORD, type Registered, registerUser } from '../support/http.js'
import { apiPath, startTestService, TEST_BASE_PATH, type TestService } from '../support/test-service.js'
import { blankPng } from './png-files.js'

const IMMUTABLE = 'public, max-age=31536000, immutable'
const UNSUPPORTED_IMAGE = 'The avatar must be a JPEG, PNG or WebP image'
const TOO_LARGE = 'The avatar must be at most 2 MB (2,097,152 bytes)'
const IMAGE_TOO_LARGE =
  'The avatar must be at most 40 megapixels and 16,384 pixels on a side (16 megapixels if interlaced or progressive, 8 at 16 bits per channel)'
const AVATAR_URL = new RegExp(`^${TEST_BASE_PATH}/avatars/([0-9a-f]{32})$`)

interface FilePart {
  name: string
  data: Buffer | string
  filename?: string
  type?: string
}

/** A multipart/form-data body made by hand, so that its file is exactly the bytes given. */
function form(parts: readonly FilePart[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----tessera${randomBytes(8).toString('hex')}`
  const chunks = parts.flatMap((part) => {
    const disposition =
      part.filename === undefined
        ? `form-data; name="${part.name}"`
        : `form-data; name="${part.name}"; filename="${part.filename}"`
    const type = part.type === undefined ? '' : `Content-Type: ${part.type}\r\n`
    return [
      Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`),
      Buffer.from(part.data),
      Buffer.from('\r\n'),
    ]
  })
  return {
    payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  }
}

const avatarFile = (data: Buffer | string, filename = 'me.jpg', type = 'image/jpeg'): FilePart => ({
  name: 'avatar',
  data,
  filename,
  type,
})

/** A phone's photo: a JPEG whose EXIF holds the camera and a GPS position. */
function photoWithGps(background = '#c03020'): Promise<Buffer> {
  return sharp({ create: { width: 1200, height: 900, channels: 3, background } })
    .jpeg()
    .withExif({
      IFD0: { Make: 'Phone', Model: 'Camera 9' },
      IFD3: {
        GPSLatitudeRef: 'N',
        GPSLatitude: '48/1 51/1 2964/100',
        GPSLongitudeRef: 'E',
        GPSLongitude: '2/1 17/1 4008/100',
      },
    })
    .toBuffer()
}

/** A valid JPEG followed by zero bytes up to `size`: a file of an exact size that is still an image. */
async function jpegOfSize(size: number): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#336699' } })
    .jpeg()
    .toBuffer()
  return Buffer.concat([jpeg, Buffer.alloc(size - jpeg.length)])
}

async function upload(app: FastifyInstance, token: string | null, parts: readonly FilePart[]) {
  const { payload, headers } = form(parts)
  const response = await app.inject({
    method: 'POST',
    url: '/auth/avatar',
    headers: token === null ? headers : { ...headers, ...bearer(token) },
    payload,
  })
  return {
    status: response.statusCode,
    headers: response.headers,
    body: response.json(),
    text: response.body,
  }
}

/** The avatar's id in an `avatar_url`, which is a path under BASE_PATH. */
function avatarId(url: unknown): string {
  const match = AVATAR_URL.exec(String(url))
  expect(match, String(url)).not.toBeNull()
  return (match as RegExpExecArray)[1] as string
}

const getAvatar = (app: FastifyInstance, id: string) => app.inject({ method: 'GET', url: `/avatars/${id}` })

describe.each(backends)('avatars [$name]', (backend: Backend) => {
  let service: TestService
  let user: Registered

  beforeAll(async () => {
    service = await startTestService(backend)
    user = await registerUser(service.app)
  })
  afterAll(async () => {
    await service?.close()
  })

  it('a JPEG with EXIF GPS is answered with the account and served re-encoded, without metadata, immutable', async () => {
    const photo = await photoWithGps()
    const reply = await upload(service.app, user.accessToken, [avatarFile(photo)])
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers['cache-control']).toBe('no-store')
    expect(reply.body).toMatchObject({
      code: 200,
      message: 'Success',
      data: { id: user.id, email: user.email, avatar_url: expect.stringMatching(AVATAR_URL) },
    })
    const id = avatarId(reply.body.data.avatar_url)

    const image = await getAvatar(service.app, id)
    expect(image.statusCode).toBe(200)
    expect(image.headers['content-type']).toBe('image/jpeg')
    expect(image.headers['cache-control']).toBe(IMMUTABLE)
    expect(image.headers['x-content-type-options']).toBe('nosniff')
    expect(image.headers['content-security-policy']).toBe("default-src 'none'; sandbox")
    expect(image.rawPayload.equals((await reencodeAvatar(photo)).data)).toBe(true)
    const metadata = await sharp(image.rawPayload).metadata()
    expect([metadata.format, metadata.width, metadata.height]).toEqual(['jpeg', 512, 512])
    expect(metadata.exif).toBeUndefined()
    expect(metadata.icc).toBeUndefined()
    expect(metadata.xmp).toBeUndefined()
    expect(image.rawPayload.includes('Exif')).toBe(false)

    const head = await service.app.inject({ method: 'HEAD', url: `/avatars/${id}` })
    expect(head.statusCode).toBe(200)
    expect(head.headers['content-type']).toBe('image/jpeg')
    expect(head.body).toBe('')
  })

  it('a second upload gets a new id and the old URL is a 404; DELETE answers null and the URL is a 404', async () => {
    const first = await upload(service.app, user.accessToken, [avatarFile(await photoWithGps('#112233'))])
    expect(first.status, first.text).toBe(200)
    const firstId = avatarId(first.body.data.avatar_url)
    const png = await sharp({
      create: { width: 300, height: 300, channels: 4, background: { r: 0, g: 128, b: 0, alpha: 0.5 } },
    })
      .png()
      .toBuffer()
    const second = await upload(service.app, user.accessToken, [avatarFile(png, 'me.png', 'image/png')])
    expect(second.status, second.text).toBe(200)
    const secondId = avatarId(second.body.data.avatar_url)
    expect(secondId).not.toBe(firstId)

    expectError(await call(service.app, 'GET', `/avatars/${firstId}`), 404, 'Not found')
    const served = await getAvatar(service.app, secondId)
    expect(served.statusCode).toBe(200)
    expect(served.headers['content-type']).toBe('image/png')
    expect((await sharp(served.rawPayload).metadata()).hasAlpha).toBe(true)

    const removed = await call(service.app, 'DELETE', '/auth/avatar', { headers: bearer(user.accessToken) })
    expect(removed.status, removed.text).toBe(200)
    expect(removed.headers['cache-control']).toBe('no-store')
    expect(removed.body).toMatchObject({
      code: 200,
      message: 'Success',
      data: { id: user.id, avatar_url: null },
    })
    expectError(await call(service.app, 'GET', `/avatars/${secondId}`), 404, 'Not found')
    // again: nothing to remove, the same answer
    const again = await call(service.app, 'DELETE', '/auth/avatar', { headers: bearer(user.accessToken) })
    expect(again.status).toBe(200)
    expect(again.body.data.avatar_url).toBeNull()
  })

  it('records avatar_changed and avatar_removed in the audit trail', async () => {
    const owner = await registerUser(service.app)
    expect((await upload(service.app, owner.accessToken, [avatarFile(await photoWithGps())])).status).toBe(
      200,
    )
    expect(
      (await call(service.app, 'DELETE', '/auth/avatar', { headers: bearer(owner.accessToken) })).status,
    ).toBe(200)
    // no avatar left: nothing removed, no event
    await call(service.app, 'DELETE', '/auth/avatar', { headers: bearer(owner.accessToken) })
    await service.flushAudit()
    const events = await service.stores.audit.list({ userId: owner.id })
    expect(events.map((event) => event.type).filter((type) => type.startsWith('avatar_'))).toEqual([
      'avatar_changed',
      'avatar_removed',
    ])
    expect(events.find((event) => event.type === 'avatar_changed')?.clientAddress).toBe('127.0.0.1')
  })
})

describe('POST /auth/avatar refusals', () => {
  let service: TestService
  let user: Registered

  beforeAll(async () => {
    service = await startTestService(backends[0] as Backend)
    user = await registerUser(service.app)
  })
  afterAll(async () => {
    await service?.close()
  })

  it('an HTML file named .png and declared image/png is a 415; the avatar is unchanged', async () => {
    const html = '<!doctype html><title>avatar</title><script>fetch("/steal?c=" + document.cookie)</script>'
    const reply = await upload(service.app, user.accessToken, [avatarFile(html, 'avatar.png', 'image/png')])
    expect(reply.status, reply.text).toBe(415)
    expect(reply.body).toEqual({ code: 415, message: UNSUPPORTED_IMAGE, data: null })
    const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
    expect(me.body.data.avatar_url).toBeNull()
  })

  it('a file that says PNG and does not decode is the same 415', async () => {
    const broken = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      randomBytes(500),
    ])
    const reply = await upload(service.app, user.accessToken, [avatarFile(broken, 'x.png', 'image/png')])
    expect(reply.body).toEqual({ code: 415, message: UNSUPPORTED_IMAGE, data: null })
  })

  it('a file of exactly 2 MB is taken; 2 MB and one byte is a 413', async () => {
    const exact = await jpegOfSize(AVATAR_MAX_BYTES)
    expect(exact.length).toBe(2_097_152)
    const taken = await upload(service.app, user.accessToken, [avatarFile(exact)])
    expect(taken.status, taken.text).toBe(200)
    avatarId(taken.body.data.avatar_url)

    const over = await upload(service.app, user.accessToken, [
      avatarFile(await jpegOfSize(AVATAR_MAX_BYTES + 1)),
    ])
    expect(over.status, over.text).toBe(413)
    expect(over.body).toEqual({ code: 413, message: TOO_LARGE, data: null })
    // the avatar is the one taken before
    const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
    expect(me.body.data.avatar_url).toBe(taken.body.data.avatar_url)
  })

  it('an image whose header declares more than is decoded (65,535 × 600 in 153 KB) is a 413; the avatar is unchanged', async () => {
    const before = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
    const bomb = await blankPng({ width: 65_535, height: 600 })
    const reply = await upload(service.app, user.accessToken, [avatarFile(bomb, 'wide.png', 'image/png')])
    expect(reply.status, reply.text).toBe(413)
    expect(reply.body).toEqual({ code: 413, message: IMAGE_TOO_LARGE, data: null })
    const after = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
    expect(after.body.data.avatar_url).toBe(before.body.data.avatar_url)
  })

  it('a body that declares more than the form can hold is a 413 before it is read', async () => {
    const { payload, headers } = form([avatarFile(await jpegOfSize(3 * 1024 * 1024))])
    const response = await service.app.inject({
      method: 'POST',
      url: '/auth/avatar',
      headers: { ...headers, ...bearer(user.accessToken) },
      payload,
    })
    expect(response.statusCode).toBe(413)
    expect(response.json()).toEqual({ code: 413, message: TOO_LARGE, data: null })
  })

  it('a body that is not a form is a 415: JSON, an image sent as is, no body at all', async () => {
    const json = await call(service.app, 'POST', '/auth/avatar', {
      headers: bearer(user.accessToken),
      body: { avatar: 'data:image/png;base64,iVBORw0KGgo=' },
    })
    expectError(json, 415, 'Content-Type must be multipart/form-data')
    const raw = await service.app.inject({
      method: 'POST',
      url: '/auth/avatar',
      headers: { ...bearer(user.accessToken), 'content-type': 'image/jpeg' },
      payload: await photoWithGps(),
    })
    expect(raw.statusCode).toBe(415)
    expect(raw.json()).toEqual({ code: 415, message: 'Content-Type must be multipart/form-data', data: null })
    const empty = await call(service.app, 'POST', '/auth/avatar', { headers: bearer(user.accessToken) })
    expectError(empty, 415, 'Content-Type must be multipart/form-data')
  })

  it('a form without the file avatar is a 400 naming it; two files, or a form without a boundary, a 400', async () => {
    const photo = await photoWithGps()
    const elsewhere = await upload(service.app, user.accessToken, [{ ...avatarFile(photo), name: 'picture' }])
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.body).toEqual({
      code: 400,
      message: 'Invalid request: /avatar is required',
      data: { errors: [{ field: '/avatar', message: 'is required' }] },
    })
    const text = await upload(service.app, user.accessToken, [{ name: 'avatar', data: 'hello' }])
    expect(text.body.message).toBe('Invalid request: /avatar must be a file')
    const nothing = await upload(service.app, user.accessToken, [])
    expect(nothing.body.message).toBe('Invalid request: /avatar is required')
    // other fields are ignored
    const withFields = await upload(service.app, user.accessToken, [
      { name: 'note', data: 'from the settings page' },
      avatarFile(photo),
    ])
    expect(withFields.status, withFields.text).toBe(200)

    const twoFiles = await upload(service.app, user.accessToken, [avatarFile(photo), avatarFile(photo)])
    expect(twoFiles.status).toBe(400)
    expect(twoFiles.body.message).toBe(
      'Invalid request: body must be a form of one file, avatar, and at most 8 other fields',
    )
    const noBoundary = await service.app.inject({
      method: 'POST',
      url: '/auth/avatar',
      headers: { ...bearer(user.accessToken), 'content-type': 'multipart/form-data' },
      payload: 'avatar',
    })
    expect(noBoundary.statusCode).toBe(400)
    expect(noBoundary.json()).toEqual({ code: 400, message: 'Bad Request', data: null })
  })

  it('without a token, POST and DELETE are a 401 and nothing is read', async () => {
    const reply = await upload(service.app, null, [avatarFile(await photoWithGps())])
    expect(reply.status).toBe(401)
    expect(reply.body).toEqual({ code: 401, message: 'Authorization header is missing', data: null })
    expect(reply.headers['www-authenticate']).toBe('Bearer')
    expectError(await call(service.app, 'DELETE', '/auth/avatar'), 401, 'Authorization header is missing')
  })

  it('GET /avatars/<id> of an id that is not 32 lowercase hex digits, or of none, is a 404 envelope', async () => {
    for (const id of ['nothing', 'A'.repeat(32), '0'.repeat(31), `${'0'.repeat(32)}.png`, '0'.repeat(32)]) {
      const reply = await call(service.app, 'GET', `/avatars/${id}`)
      expectError(reply, 404, 'Not found')
      expect(reply.headers['cache-control']).toBeUndefined()
    }
  })

  it("a deleted account's still-valid access token uploads nothing: 401, as GET /auth/me", async () => {
    const doomed = await registerUser(service.app)
    const deleted = await call(service.app, 'POST', '/auth/delete', {
      headers: bearer(doomed.accessToken),
      body: { password: PASSWORD },
    })
    expect(deleted.status, deleted.text).toBe(200)
    const reply = await upload(service.app, doomed.accessToken, [avatarFile(await photoWithGps())])
    expect(reply.status).toBe(401)
    expect(reply.body).toEqual({ code: 401, message: 'Access token is invalid or expired', data: null })
  })
})

describe('avatars with BASE_PATH and a rate limit', () => {
  let service: TestService

  beforeAll(async () => {
    service = await startTestService(backends[0] as Backend, {
      env: { BASE_PATH: '/api', RATE_LIMIT_PER_MINUTE: '2' },
    })
  })
  afterAll(async () => {
    await service?.close()
  })

  it('avatar_url carries BASE_PATH (/api/avatars/<id>) and is served there; a third change in a minute is a 429', async () => {
    const registered = await call(service.app, 'POST', '/api/auth/register', {
      body: { email: `avatar-${randomBytes(4).toString('hex')}@example.com`, password: PASSWORD },
    })
    expect(registered.status, registered.text).toBe(200)
    const token = registered.body.data.access_token as string
    const { payload, headers } = form([avatarFile(await photoWithGps())])
    const send = () =>
      service.app.inject({
        method: 'POST',
        url: '/api/auth/avatar',
        headers: { ...headers, ...bearer(token) },
        payload,
      })
    const first = await send()
    expect(first.statusCode, first.body).toBe(200)
    expect(first.headers['x-ratelimit-limit']).toBe('2')
    const url = first.json().data.avatar_url as string
    expect(url).toMatch(/^\/api\/avatars\/[0-9a-f]{32}$/)
    const image = await service.app.inject({ method: 'GET', url })
    expect(image.statusCode).toBe(200)
    expect(image.headers['cache-control']).toBe(IMMUTABLE)
    expect((await service.app.inject({ method: 'GET', url: url.replace('/api', '') })).statusCode).toBe(404)

    expect((await send()).statusCode).toBe(200)
    const limited = await send()
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['retry-after']).toBeDefined()
  })
})

describe.each(backends.filter((backend) => backend.name === 'postgres'))(
  'two instances on one PostgreSQL database [$name]',
  (backend) => {
    let instance: Awaited<ReturnType<Backend['setup']>>
    let first: TestService
    let second: TestService
    const urls: string[] = []

    beforeAll(async () => {
      instance = await backend.setup()
      first = await startTestService(backend, { instance })
      second = await startTestService(backend, { instance })
      for (const service of [first, second]) {
        urls.push(await service.app.listen({ host: '127.0.0.1', port: 0 }))
      }
    })
    afterAll(async () => {
      await first?.close()
      await second?.close()
      await instance?.teardown()
    })

    it('an avatar uploaded through the first, over HTTP with FormData, is served by the second', async () => {
      const [firstUrl, secondUrl] = urls as [string, string]
      const email = `two-${randomBytes(4).toString('hex')}@example.com`
      const registered = await fetch(`${firstUrl}${apiPath('/auth/register')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: PASSWORD }),
      })
      expect(registered.status).toBe(200)
      const token = ((await registered.json()) as { data: { access_token: string } }).data.access_token
      const photo = await photoWithGps()
      const body = new FormData()
      body.append('avatar', new Blob([photo], { type: 'image/jpeg' }), 'photo.jpg')
      const uploaded = await fetch(`${firstUrl}${apiPath('/auth/avatar')}`, {
        method: 'POST',
        headers: bearer(token),
        body,
      })
      expect(uploaded.status).toBe(200)
      const url = ((await uploaded.json()) as { data: { avatar_url: string } }).data.avatar_url
      avatarId(url)

      const served = await fetch(`${secondUrl}${url}`)
      expect(served.status).toBe(200)
      expect(served.headers.get('content-type')).toBe('image/jpeg')
      expect(served.headers.get('cache-control')).toBe(IMMUTABLE)
      const bytes = Buffer.from(await served.arrayBuffer())
      expect(bytes.equals((await reencodeAvatar(photo)).data)).toBe(true)

      // removed through the second, gone from the first
      const removed = await fetch(`${secondUrl}${apiPath('/auth/avatar')}`, {
        method: 'DELETE',
        headers: bearer(token),
      })
      expect(removed.status).toBe(200)
      expect((await fetch(`${firstUrl}${url}`)).status).toBe(404)

      // 2 MB and one byte, over a real connection: the answer is read, a 413
      const over = new FormData()
      over.append(
        'avatar',
        new Blob([await jpegOfSize(AVATAR_MAX_BYTES + 1)], { type: 'image/jpeg' }),
        'big.jpg',
      )
      const refused = await fetch(`${firstUrl}${apiPath('/auth/avatar')}`, {
        method: 'POST',
        headers: bearer(token),
        body: over,
      })
      expect(refused.status).toBe(413)
      expect(await refused.json()).toEqual({ code: 413, message: TOO_LARGE, data: null })
    })
  },
)
