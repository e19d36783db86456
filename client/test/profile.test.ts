import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toAccount } from '../src/account.js'
import { createTesseraClient, type TesseraError } from '../src/index.js'
import {
  createSharedStorage,
  newCredentials,
  observedFetch,
  spoilStoredAccessToken,
  startListeningService,
} from './service.js'

let service: Awaited<ReturnType<typeof startListeningService>>
beforeAll(async () => {
  service = await startListeningService()
})
afterAll(() => service?.close())

/** A PNG of one pixel. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
)
const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('should have failed'),
    (error: unknown) => error as TesseraError,
  )

/** A client logged in to a new account, whose every request is observed; what it sent so far forgotten. */
async function registeredClient() {
  const storage = createSharedStorage()
  const observed = observedFetch()
  const client = createTesseraClient({ baseUrl: service.baseUrl, storage, fetch: observed.send })
  const account = await client.register(newCredentials())
  observed.requests.length = 0
  /** What it has sent since the last call, as `METHOD /path`; forgotten once read. */
  const sent = () => observed.requests.splice(0).map((r) => `${r.method} ${r.path}`)
  return { client, storage, observed, account, sent }
}

/** A username no other test takes. */
let usernames = 0
const newUsername = () => `user_${process.pid}.${++usernames}-${Date.now() % 100_000}`

describe('the profile', () => {
  it('a new account has none: every profile field null, the role user, a password and no provider', async () => {
    const { account } = await registeredClient()
    expect(account).toEqual({
      id: expect.stringMatching(/^[1-9]\d{9}$/),
      email: expect.any(String),
      emailVerified: false,
      username: null,
      nickname: null,
      avatarUrl: null,
      bio: null,
      role: 'user',
      status: 'active',
      passwordSet: true,
      providers: [],
      createdAt: expect.stringMatching(INSTANT),
      updatedAt: account.createdAt,
    })
  })

  it('updateProfile sends the fields given, clears the ones given as null, and answers the account', async () => {
    const { client, account, observed, sent } = await registeredClient()
    const username = newUsername()
    const changed = await client.updateProfile({
      username: username.toUpperCase(),
      nickname: 'Ann',
      bio: 'Hi',
    })
    expect(sent()).toEqual(['PUT /auth/profile'])
    expect(observed.requests).toEqual([])
    expect(changed).toEqual({
      ...account,
      username,
      nickname: 'Ann',
      bio: 'Hi',
      updatedAt: expect.stringMatching(INSTANT),
    })
    expect(await client.me()).toEqual(changed)
    sent()

    // a field left out is not sent, and stays as it is
    const cleared = await client.updateProfile({ nickname: null })
    expect(JSON.parse(observed.requests[0]?.body ?? '')).toEqual({ nickname: null })
    expect(observed.requests[0]?.headers['content-type']).toBe('application/json')
    expect(cleared).toEqual({ ...changed, nickname: null, updatedAt: expect.stringMatching(INSTANT) })
  })

  it('a refused value is a 400 naming its field; a username another account has, a 409', async () => {
    const { client } = await registeredClient()
    expect(await failure(client.updateProfile({ username: 'no spaces' }))).toMatchObject({
      status: 400,
      errors: [{ field: '/username', message: expect.any(String) }],
      retryable: false,
    })
    expect(await failure(client.updateProfile({ bio: 'x'.repeat(501) }))).toMatchObject({
      status: 400,
      errors: [{ field: '/bio', message: 'must have at most 500 characters' }],
    })
    const username = newUsername()
    await client.updateProfile({ username })
    const other = await registeredClient()
    expect(await failure(other.client.updateProfile({ username: username.toUpperCase() }))).toMatchObject({
      status: 409,
      message: 'Username already taken',
      errors: [],
      retryable: false,
    })
    expect((await other.client.me()).username).toBeNull()
  })

  it('is a protected call: on a 401, one refresh and the same PUT again', async () => {
    const { client, storage, observed, sent } = await registeredClient()
    spoilStoredAccessToken(storage)
    const changed = await client.updateProfile({ nickname: 'After a refresh' })
    expect(changed.nickname).toBe('After a refresh')
    const [first, , retry] = observed.requests
    expect(sent()).toEqual(['PUT /auth/profile', 'POST /auth/refresh', 'PUT /auth/profile'])
    expect(retry?.body).toBe(first?.body)
  })
})

describe('the avatar', () => {
  it('uploadAvatar sends a form with the file, and answers the account with the URL of the image', async () => {
    const { client, account, observed } = await registeredClient()
    const changed = await client.uploadAvatar(new Blob([PNG], { type: 'image/png' }), 'me.png')
    const [upload] = observed.requests
    expect(upload).toMatchObject({ method: 'POST', path: '/auth/avatar' })
    // the form's own type, with its boundary: never JSON
    expect(upload?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/)
    expect(upload?.body).toContain('name="avatar"; filename="me.png"')
    expect(changed).toEqual({
      ...account,
      avatarUrl: expect.stringMatching(new RegExp(`^${service.baseUrl}/avatars/[0-9a-f]{32}$`)),
      updatedAt: expect.stringMatching(INSTANT),
    })
    expect(await client.me()).toEqual(changed)
    // absolute, so that a page of another origin finds it; public, so that an <img> loads it without a token
    const image = await fetch(changed.avatarUrl ?? '')
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toMatch(/^image\//)

    const removed = await client.removeAvatar()
    expect(observed.requests.at(-1)).toMatchObject({ method: 'DELETE', path: '/auth/avatar', body: '' })
    expect(removed).toEqual({ ...changed, avatarUrl: null, updatedAt: expect.stringMatching(INSTANT) })
    expect((await fetch(changed.avatarUrl ?? '')).status).toBe(404)
  })

  it('a file without a name goes as the form names a Blob; after a refused token, the same form again', async () => {
    const { client, storage, observed } = await registeredClient()
    spoilStoredAccessToken(storage)
    const changed = await client.uploadAvatar(new Blob([PNG]))
    expect(changed.avatarUrl).toMatch(/\/avatars\/[0-9a-f]{32}$/)
    const [first, refresh, retry] = observed.requests
    expect(refresh?.path).toBe('/auth/refresh')
    expect(first?.body).toContain('name="avatar"; filename="blob"')
    expect(retry?.body).toBe(first?.body)
    expect(retry?.headers['content-type']).toBe(first?.headers['content-type'])
  })

  it('a file too large is a 413, one of another type a 415', async () => {
    const { client } = await registeredClient()
    const large = new Blob([PNG, new Uint8Array(2 * 1024 * 1024)], { type: 'image/png' })
    expect(await failure(client.uploadAvatar(large, 'large.png'))).toMatchObject({
      status: 413,
      message: 'The avatar must be at most 2 MB (2,097,152 bytes)',
    })
    expect(
      await failure(client.uploadAvatar(new Blob(['not an image'], { type: 'image/png' }))),
    ).toMatchObject({
      status: 415,
      message: 'The avatar must be a JPEG, PNG or WebP image',
    })
    expect((await client.me()).avatarUrl).toBeNull()
  })

  it('avatarUrl is made absolute with an absolute baseUrl (BASE_PATH in the path), and kept as it is otherwise', () => {
    const data = { id: '1234567890', avatar_url: '/api/avatars/9b2e4c1a7f3d5e6b8a0c2d4e6f8a1b3c' }
    expect(toAccount(data, 'https://auth.example.com/api').avatarUrl).toBe(
      'https://auth.example.com/api/avatars/9b2e4c1a7f3d5e6b8a0c2d4e6f8a1b3c',
    )
    expect(toAccount(data, '').avatarUrl).toBe('/api/avatars/9b2e4c1a7f3d5e6b8a0c2d4e6f8a1b3c')
    expect(toAccount({ ...data, avatar_url: null }, 'https://auth.example.com').avatarUrl).toBeNull()
  })
})
