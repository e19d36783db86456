import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import {
  bearer,
  call,
  decodeJwt,
  expectError,
  NEW_ACCOUNT_FIELDS,
  PASSWORD,
  registerUser,
  uniqueEmail,
} from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'

const INVALID_CREDENTIALS = 'E-mail or password wrong'

describe.each(backends)('profiles on $name (docs/api.md §2.1, §4.22)', (backend) => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend)
  })
  afterAll(async () => {
    await service?.close()
  })

  const put = (token: string, body: unknown) =>
    call(service.app, 'PUT', '/auth/profile', { headers: bearer(token), body })
  const me = async (token: string) => {
    const reply = await call(service.app, 'GET', '/auth/me', { headers: bearer(token) })
    expect(reply.status, reply.text).toBe(200)
    return reply.body.data
  }

  it('shows every account field, unset ones null, in GET /auth/me and in the answers that log in', async () => {
    const email = uniqueEmail()
    const registered = await call(service.app, 'POST', '/auth/register', {
      body: { email, password: PASSWORD },
    })
    expect(registered.status, registered.text).toBe(200)
    const expected = {
      id: registered.body.data.id,
      email,
      ...NEW_ACCOUNT_FIELDS,
      created_at: registered.body.data.created_at,
      updated_at: registered.body.data.created_at,
    }
    expect(registered.body.data).toEqual({
      ...expected,
      access_token: expect.any(String),
      refresh_token: expect.any(String),
    })
    const login = await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
    expect(login.body.data).toEqual({
      ...expected,
      access_token: expect.any(String),
      refresh_token: expect.any(String),
    })
    expect(await me(login.body.data.access_token)).toEqual(expected)
    // a user's tokens are what they were before roles: no role claim
    expect(decodeJwt(login.body.data.access_token).claims).not.toHaveProperty('role')
    expect(decodeJwt(login.body.data.refresh_token).claims).not.toHaveProperty('role')
  })

  it('sets, keeps and clears fields: a string sets one, null clears it, an absent one stays', async () => {
    const user = await registerUser(service.app)
    const before = await me(user.accessToken)
    const set = await put(user.accessToken, {
      username: `Ada.L_${user.id.slice(-6)}`,
      nickname: '  Ada Lovelace  ',
      bio: 'Line one\r\nline two\twith a tab',
    })
    expect(set.status, set.text).toBe(200)
    expect(set.body.data).toMatchObject({
      username: `ada.l_${user.id.slice(-6)}`,
      nickname: 'Ada Lovelace',
      bio: 'Line one\nline two\twith a tab',
    })
    expect(Date.parse(set.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at))
    expect(await me(user.accessToken)).toEqual(set.body.data)

    const partial = await put(user.accessToken, { nickname: 'Countess' })
    expect(partial.body.data).toMatchObject({
      username: `ada.l_${user.id.slice(-6)}`,
      nickname: 'Countess',
      bio: 'Line one\nline two\twith a tab',
    })
    const cleared = await put(user.accessToken, { username: null, bio: '' })
    expect(cleared.status, cleared.text).toBe(200)
    expect(cleared.body.data).toMatchObject({ username: null, nickname: 'Countess', bio: null })
    expect(await me(user.accessToken)).toEqual(cleared.body.data)

    await service.flushAudit()
    const events = await service.stores.audit.list({ userId: user.id })
    expect(events.filter((event) => event.type === 'profile_updated')).toHaveLength(3)
  })

  it('answers 409 for a username another account has, whatever its case, and changes nothing', async () => {
    const first = await registerUser(service.app)
    const second = await registerUser(service.app)
    const name = `grace_${first.id.slice(-8)}`
    expect((await put(first.accessToken, { username: name })).status).toBe(200)
    const taken = await put(second.accessToken, { username: name.toUpperCase(), nickname: 'Grace' })
    expectError(taken, 409, 'Username already taken')
    expect(await me(second.accessToken)).toMatchObject({ username: null, nickname: null })
    // the owner may set its own username again
    expect((await put(first.accessToken, { username: name.toUpperCase() })).status).toBe(200)
  })

  it.each([
    [{ username: 'ab' }, '/username'],
    [{ username: 'a'.repeat(33) }, '/username'],
    [{ username: 'has space' }, '/username'],
    [{ username: 'émile' }, '/username'],
    [{ username: 42 }, '/username'],
    [{ nickname: '' }, '/nickname'],
    [{ nickname: '   ' }, '/nickname'],
    [{ nickname: 'n'.repeat(65) }, '/nickname'],
    [{ nickname: 'bell\u0007' }, '/nickname'],
    [{ nickname: 'two\nlines' }, '/nickname'],
    [{ bio: 'b'.repeat(501) }, '/bio'],
    [{ bio: 'escape \u001b[31m' }, '/bio'],
  ])('refuses %j with a 400 naming %s, and changes nothing', async (body, field) => {
    const user = await registerUser(service.app)
    const before = await me(user.accessToken)
    const reply = await put(user.accessToken, { ...body, bio: (body as { bio?: string }).bio ?? 'kept?' })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.message).toContain(field)
    expect(reply.body.data.errors.map((error: { field: string }) => error.field)).toContain(field)
    expect(await me(user.accessToken)).toEqual(before)
  })

  it.each([
    ['a right-to-left override in a nickname', { nickname: 'admin\u202Egnp.exe' }, '/nickname'],
    ['a zero-width space in a nickname', { nickname: 'ad\u200Bmin' }, '/nickname'],
    ['a nickname of a Hangul filler alone', { nickname: '\u3164' }, '/nickname'],
    ['a zero-width joiner between letters of a nickname', { nickname: 'Ada\u200DLovelace' }, '/nickname'],
    ['a right-to-left isolate in a bio', { bio: 'Hello\n\u2067world\u2069' }, '/bio'],
    ['tag characters in a bio', { bio: `hi${String.fromCodePoint(0xe0069, 0xe0067, 0xe006e)}` }, '/bio'],
  ])(
    'R4.22.2 refuses %s, a character that hides or reorders text, with a 400 naming it',
    async (_what, body, field) => {
      const user = await registerUser(service.app)
      const before = await me(user.accessToken)
      const reply = await put(user.accessToken, { nickname: 'kept?', ...body })
      const message = 'must not contain invisible or direction-changing characters'
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body).toEqual({
        code: 400,
        message: `Invalid request: ${field} ${message}`,
        data: { errors: [{ field, message }] },
      })
      expect(await me(user.accessToken)).toEqual(before)
    },
  )

  it('R4.22.2 keeps emoji sequences with their joiners and selectors, and the joiners of Persian or Hindi', async () => {
    const user = await registerUser(service.app)
    const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}'
    const rainbow = '\u{1F3F3}\uFE0F\u200D\u{1F308}'
    const scotland = '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}'
    const nickname = `${family} ${rainbow} ${scotland} \u{1F44D}\u{1F3FD} #\uFE0F\u20E3`
    const bio =
      'Persian: \u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645\nHindi: \u0915\u094D\u200D\u0937\t\u05E9\u05DC\u05D5\u05DD'
    const reply = await put(user.accessToken, { nickname, bio })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({ nickname, bio })
    expect(await me(user.accessToken)).toMatchObject({ nickname, bio })
  })

  it('counts characters, not bytes: 64 emoji are a nickname, 500 a bio', async () => {
    const user = await registerUser(service.app)
    const reply = await put(user.accessToken, { nickname: '😀'.repeat(64), bio: 'é'.repeat(500) })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.nickname).toBe('😀'.repeat(64))
  })

  it('needs the access token', async () => {
    const reply = await call(service.app, 'PUT', '/auth/profile', { body: { nickname: 'x' } })
    expect(reply.status).toBe(401)
  })

  it('refuses a disabled account at login with the answer of a wrong password, after the same work', async () => {
    const user = await registerUser(service.app)
    expect(await service.stores.users.setStatus(user.id, 'disabled', new Date().toISOString())).toBe(true)
    const right = await call(service.app, 'POST', '/auth/login', {
      body: { email: user.email, password: user.password },
    })
    expectError(right, 401, INVALID_CREDENTIALS)
    const wrong = await call(service.app, 'POST', '/auth/login', {
      body: { email: user.email, password: 'not the password' },
    })
    expectError(wrong, 401, INVALID_CREDENTIALS)
    await service.flushAudit()
    const reasons = (await service.stores.audit.list({ userId: user.id }))
      .filter((event) => event.type === 'login_failed')
      .map((event) => event.reason)
    expect(reasons).toEqual(['disabled', 'wrong_password'])

    expect(await service.stores.users.setStatus(user.id, 'active', new Date().toISOString())).toBe(true)
    const again = await call(service.app, 'POST', '/auth/login', {
      body: { email: user.email, password: user.password },
    })
    expect(again.status, again.text).toBe(200)
    expect(again.body.data.status).toBe('active')
  })

  it('puts a role other than user in access and refresh tokens, and a rotation keeps it', async () => {
    const user = await registerUser(service.app)
    expect(await service.stores.users.setRole(user.id, 'editor', new Date().toISOString())).toBe(true)
    const login = await call(service.app, 'POST', '/auth/login', {
      body: { email: user.email, password: user.password },
    })
    expect(login.body.data.role).toBe('editor')
    expect(decodeJwt(login.body.data.access_token).claims.role).toBe('editor')
    const refreshed = await call(service.app, 'POST', '/auth/refresh', {
      body: { refresh_token: login.body.data.refresh_token },
    })
    expect(refreshed.status, refreshed.text).toBe(200)
    expect(decodeJwt(refreshed.body.data.access_token).claims.role).toBe('editor')
    expect(decodeJwt(refreshed.body.data.refresh_token).claims.role).toBe('editor')
    expect((await me(refreshed.body.data.access_token)).role).toBe('editor')
  })
})
