import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { userAdminOn } from '../../src/auth/user-admin.js'
import { systemClock } from '../../src/clock.js'
import { OperationFailedError, StorageError } from '../../src/errors.js'
import type { Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { createGate } from '../support/gate.js'
import { call, expectError, PASSWORD, registerUser } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

const failure = (what: string) => new StorageError(what, { cause: new Error('ECONNRESET') })

/**
 * The operator's set-role, disable and enable (`tessera users`, src/auth/user-admin.ts) against the service's stores:
 * disable sets the status before it ends the sessions, so that a login running meanwhile keeps no session whichever
 * side it falls on (the session starter reads the status again once its session is stored); a step that fails says
 * what was done.
 */
describe.each(backends)('operator role and status changes [$name]', (backend) => {
  let service: TestService
  let opened: Stores
  let startGate = createGate()
  let rereadGate = createGate()
  /** The calls of setStatus and endAll, in order, while `recording` is on. */
  let calls: string[] = []
  let recording = false
  beforeAll(async () => {
    service = await startTestService(backend, {
      wrapStores: (stores) => {
        opened = stores
        return {
          ...stores,
          users: {
            ...stores.users,
            // a login reads the account by e-mail; findById is the session starter's read after storing the session
            findById: async (id) => {
              await rereadGate.pass()
              return stores.users.findById(id)
            },
          },
          sessions: {
            ...stores.sessions,
            start: async (session, limit, now) => {
              await startGate.pass()
              return stores.sessions.start(session, limit, now)
            },
          },
        }
      },
    })
  })
  afterAll(() => service?.close())

  const operatorOn = (stores: Stores) => userAdminOn(stores, service.config, systemClock)
  /** The operator on the stores as opened, each setStatus and endAll logged in `calls` while recording. */
  const admin = () =>
    operatorOn({
      ...opened,
      users: {
        ...opened.users,
        setStatus: (...args) => {
          if (recording) calls.push('setStatus')
          return opened.users.setStatus(...args)
        },
      },
      sessions: {
        ...opened.sessions,
        endAll: (...args) => {
          if (recording) calls.push('endAll')
          return opened.sessions.endAll(...args)
        },
      },
    })
  const login = (email: string, password = PASSWORD) =>
    call(service.app, 'POST', '/auth/login', { body: { email, password } })
  const sessionsOf = (userId: string) => opened.sessions.list(userId, Date.now())
  const eventTypes = async (userId: string) =>
    (await opened.audit.list({ userId }))
      .filter((event) => event.reason === 'operator')
      .map((event) => event.type)

  it('disable sets the status first, then ends every session; enable sets it back', async () => {
    const user = await registerUser(service.app)
    calls = []
    recording = true
    const disabled = await admin().disable(await admin().find({ id: user.id }))
    recording = false
    expect(calls).toEqual(['setStatus', 'endAll'])
    expect(disabled).toMatchObject({
      changed: true,
      sessionsEnded: 1,
      user: { id: user.id, status: 'disabled' },
    })
    expect(await opened.users.findById(user.id)).toMatchObject({
      status: 'disabled',
      updatedAt: disabled.user.updatedAt,
    })
    expect(await sessionsOf(user.id)).toEqual([])

    const enabled = await admin().enable(await admin().find({ email: user.email }))
    expect(enabled).toMatchObject({ changed: true, sessionsEnded: 0, user: { status: 'active' } })
    expect(await opened.users.findById(user.id)).toMatchObject({
      status: 'active',
      updatedAt: enabled.user.updatedAt,
    })
    expect(await eventTypes(user.id)).toEqual(['account_disabled', 'account_enabled'])
  })

  it('a login that read the account before the disable stores its session after it: 401, no session left', async () => {
    const user = await registerUser(service.app)
    startGate = createGate()
    startGate.close()
    const loggingIn = login(user.email)
    // the login has read the account (active) and verified the password; its session is not stored yet
    await startGate.arrived
    const disabled = await admin().disable(await admin().find({ email: user.email }))
    expect(disabled.sessionsEnded).toBe(1)
    startGate.open()
    expectError(await loggingIn, 401, MESSAGES.invalidCredentials)
    expect(await sessionsOf(user.id)).toEqual([])
  })

  it('a login whose session was stored before the disable ended the sessions: 401, no session left', async () => {
    const user = await registerUser(service.app)
    const account = await admin().find({ email: user.email })
    rereadGate = createGate()
    rereadGate.close()
    const loggingIn = login(user.email)
    // the session is stored (it replaced the registration's), the status not read again yet
    await rereadGate.arrived
    expect(await sessionsOf(user.id)).toHaveLength(1)
    const disabled = await admin().disable(account)
    expect(disabled.sessionsEnded).toBe(1)
    rereadGate.open()
    expectError(await loggingIn, 401, MESSAGES.invalidCredentials)
    expect(await sessionsOf(user.id)).toEqual([])
  })

  it('a disable whose end of the sessions fails says so; run again, it ends them without a second event', async () => {
    const user = await registerUser(service.app)
    const failing = operatorOn({
      ...opened,
      sessions: { ...opened.sessions, endAll: () => Promise.reject(failure('sessions.endAll failed')) },
    })
    const error = await failing
      .disable(await failing.find({ id: user.id }))
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OperationFailedError)
    expect((error as Error).message).toBe(
      `the account is disabled, but its sessions were not ended (run tessera users disable ${user.id} again): ` +
        'sessions.endAll failed: ECONNRESET',
    )
    expect(await opened.users.findById(user.id)).toMatchObject({ status: 'disabled' })
    expect(await sessionsOf(user.id)).toHaveLength(1)
    // a disabled account cannot log in, whatever sessions it has left
    expectError(await login(user.email), 401, MESSAGES.invalidCredentials)

    const again = await admin().disable(await admin().find({ id: user.id }))
    expect(again).toMatchObject({ changed: false, sessionsEnded: 1, user: { status: 'disabled' } })
    expect(await sessionsOf(user.id)).toEqual([])
    expectError(
      await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }),
      401,
      MESSAGES.refreshTokenInvalid,
    )
    // the change is in the trail although its sessions were not ended; the status unchanged adds no event
    expect(await eventTypes(user.id)).toEqual(['account_disabled'])
  })

  it('set-role: ends the sessions; a failure to end them names the revoke to run; the same role changes nothing', async () => {
    const user = await registerUser(service.app)
    const failing = operatorOn({
      ...opened,
      sessions: { ...opened.sessions, endAll: () => Promise.reject(failure('sessions.endAll failed')) },
    })
    const error = await failing
      .setRole(await failing.find({ id: user.id }), 'support')
      .catch((caught: unknown) => caught)
    expect((error as Error).message).toBe(
      `the role was changed, but the sessions were not ended (run tessera users revoke ${user.id}): ` +
        'sessions.endAll failed: ECONNRESET',
    )
    expect(await opened.users.findById(user.id)).toMatchObject({ role: 'support' })

    const same = await admin().setRole(await admin().find({ id: user.id }), 'support')
    expect(same).toMatchObject({ changed: false, sessionsEnded: 0 })
    expect(await sessionsOf(user.id)).toHaveLength(1)
    const changed = await admin().setRole(await admin().find({ id: user.id }), 'user')
    expect(changed).toMatchObject({ changed: true, sessionsEnded: 1, user: { role: 'user' } })
    expect(await sessionsOf(user.id)).toEqual([])
    expect(await eventTypes(user.id)).toEqual(['role_changed', 'role_changed'])

    // a name that is no role is refused before anything is written
    await expect(admin().setRole(await admin().find({ id: user.id }), 'Admin')).rejects.toThrow(
      'not a role name (ROLE_NAME); nothing was changed',
    )
    expect(await opened.users.findById(user.id)).toMatchObject({ role: 'user' })
  })

  it('an audit event that cannot be written: the sessions are ended all the same, and the line says so', async () => {
    const user = await registerUser(service.app)
    const failing = operatorOn({
      ...opened,
      audit: { ...opened.audit, append: () => Promise.reject(failure('audit.append failed')) },
    })
    await expect(failing.disable(await failing.find({ id: user.id }))).rejects.toThrow(
      'the account was disabled, but its audit event was not written: audit.append failed: ECONNRESET',
    )
    expect(await opened.users.findById(user.id)).toMatchObject({ status: 'disabled' })
    expect(await sessionsOf(user.id)).toEqual([])

    await admin().enable(await admin().find({ id: user.id }))
    expect((await login(user.email)).status).toBe(200)
    await expect(failing.setRole(await failing.find({ id: user.id }), 'admin')).rejects.toThrow(
      'the role was changed, but its audit event was not written: audit.append failed: ECONNRESET',
    )
    expect(await opened.users.findById(user.id)).toMatchObject({ role: 'admin' })
    expect(await sessionsOf(user.id)).toEqual([])
  })

  it('an account deleted meanwhile: set-role, disable and enable say so', async () => {
    const user = await registerUser(service.app)
    const account = await admin().find({ id: user.id })
    await admin().delete(account)
    const deleted = `no account has the id ${user.id} (deleted meanwhile)`
    await expect(admin().setRole(account, 'admin')).rejects.toThrow(deleted)
    await expect(admin().disable(account)).rejects.toThrow(deleted)
    await expect(admin().enable({ ...account, status: 'disabled' })).rejects.toThrow(deleted)
  })
})
