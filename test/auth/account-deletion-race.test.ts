import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type UserAdmin, userAdminOn } from '../../src/auth/user-admin.js'
import { systemClock } from '../../src/clock.js'
import { OperationFailedError, StorageError } from '../../src/errors.js'
import type { Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { createGate } from '../support/gate.js'
import { call, expectError, PASSWORD, registerUser } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

/**
 * Deleting an account while its user logs in or refreshes (docs/administration.md "Administering users"): with REDIS_URL no foreign
 * key ties a refresh token to its account, so the deletion retires the user's token first and a login that read the
 * account before it was deleted stores nothing; refresh, which does not read the account, has nothing to rotate.
 */
describe.each(backends)('deleting an account during a login or a refresh [$name]', (backend) => {
  let service: TestService
  let opened: Stores
  let admin: UserAdmin
  let putGate = createGate()
  let rotateGate = createGate()
  beforeAll(async () => {
    service = await startTestService(backend, {
      wrapStores: (stores) => {
        opened = stores
        return {
          ...stores,
          sessions: {
            ...stores.sessions,
            start: async (session, limit, now) => {
              await putGate.pass()
              return stores.sessions.start(session, limit, now)
            },
            rotate: async (userId, current, next, now) => {
              await rotateGate.pass()
              return stores.sessions.rotate(userId, current, next, now)
            },
          },
        }
      },
    })
    admin = operatorOn(opened)
  })
  afterAll(() => service?.close())

  const operatorOn = (stores: Stores) => userAdminOn(stores, service.config, systemClock)
  const login = (email: string, password = PASSWORD) =>
    call(service.app, 'POST', '/auth/login', { body: { email, password } })

  it('R3.11 a login that read the account before the deletion gets 401 and leaves no refresh token', async () => {
    const user = await registerUser(service.app)
    putGate = createGate()
    putGate.close()
    const loggingIn = login(user.email)
    // the login has read the account and verified the password; its token is not stored yet
    await putGate.arrived
    await admin.delete(await admin.find({ id: user.id }))
    putGate.open()
    expectError(await loggingIn, 401, MESSAGES.invalidCredentials)
    expect(await opened.sessions.list(user.id, Date.now())).toEqual([])
    expectError(
      await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }),
      401,
      MESSAGES.refreshTokenInvalid,
    )
  })

  it('R3.11 a refresh in flight during the deletion is refused, and no token is left to rotate', async () => {
    const user = await registerUser(service.app)
    rotateGate = createGate()
    rotateGate.close()
    const refreshing = call(service.app, 'POST', '/auth/refresh', {
      body: { refresh_token: user.refreshToken },
    })
    await rotateGate.arrived
    await admin.delete(await admin.find({ id: user.id }))
    rotateGate.open()
    expectError(await refreshing, 401, MESSAGES.refreshTokenInvalid)
    expect(await opened.sessions.list(user.id, Date.now())).toEqual([])
  })

  it('a deletion that fails after the token was retired lets the user log in again, and says so', async () => {
    const user = await registerUser(service.app)
    const failing = operatorOn({
      ...opened,
      users: {
        ...opened.users,
        delete: () =>
          Promise.reject(new StorageError('users.delete failed', { cause: new Error('ECONNRESET') })),
      },
    })
    const error = await failing.delete(await failing.find({ id: user.id })).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OperationFailedError)
    expect((error as Error).message).toBe(
      'the account was not deleted (the user was logged out): users.delete failed: ECONNRESET',
    )
    expect(await opened.users.findById(user.id)).not.toBeNull()
    // logged out by the retirement, and free to log in again
    expectError(
      await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }),
      401,
      MESSAGES.refreshTokenInvalid,
    )
    const again = await login(user.email)
    expect(again.status, again.text).toBe(200)
    expect(await opened.sessions.list(user.id, Date.now())).toHaveLength(1)
  })
})
