import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StorageError } from '../../src/errors.js'
import type { Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { withInjectedFailures } from '../support/failing-stores.js'
import { bearer, call, expectError, PASSWORD, registerUser, uniqueEmail } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

// docs/api.md section 7. Each error of its table is tested with the rule that produces it; what is left here is the
// 500 that no rule foresees. The envelope itself (R1.2) is tested in test/http/envelope.test.ts.
describe.each(backends)('R7 errors [$name]', (backend) => {
  describe('R7.1 an unforeseen failure is a 500', () => {
    let failing = false
    let broken: TestService
    beforeAll(async () => {
      broken = await startTestService(backend, {
        wrapStores: (stores: Stores) => withInjectedFailures(stores, () => failing),
      })
    })
    afterAll(() => broken.close())

    it('R7.1 a failing store gives a 500 envelope with a generic text on every endpoint, logs the stack, and the process keeps serving', async () => {
      const user = await registerUser(broken.app)
      failing = true
      const replies = [
        await call(broken.app, 'POST', '/auth/register', {
          body: { email: uniqueEmail(), password: PASSWORD },
        }),
        await call(broken.app, 'POST', '/auth/login', { body: { email: user.email, password: PASSWORD } }),
        await call(broken.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }),
        await call(broken.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(user.accessToken) }),
        await call(broken.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) }),
      ]
      failing = false
      for (const reply of replies) {
        expectError(reply, 500, MESSAGES.internal)
        expect(reply.text).not.toContain('secret-host')
      }
      const errors = broken.logs().filter((record) => record.level === 50)
      expect(errors).toHaveLength(5)
      expect((errors[0]?.err as { stack?: string } | undefined)?.stack).toContain('ECONNREFUSED')
      // still serving, and nothing was lost: the account and its token still work
      expect((await call(broken.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })).status).toBe(
        200,
      )
      expect(
        (await call(broken.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }))
          .status,
      ).toBe(200)
    })
  })
  describe('R7.2 a registration is all or nothing', () => {
    let failure: 'none' | 'session' | 'session and undo' | 'session unknown' = 'none'
    let service: TestService
    beforeAll(async () => {
      service = await startTestService(backend, {
        wrapStores: (stores: Stores) =>
          withInjectedFailures(
            withInjectedFailures(
              withInjectedFailures(stores, () => failure === 'session' || failure === 'session and undo', {
                writes: ['start'],
              }),
              () => failure === 'session and undo',
              { writes: ['delete'] },
            ),
            () => failure === 'session unknown',
            { writes: ['start'], outcomeUnknown: true },
          ),
      })
    })
    afterAll(() => service.close())

    const register = (email: string) =>
      call(service.app, 'POST', '/auth/register', { body: { email, password: PASSWORD } })

    it.each(['session', 'session unknown'] as const)(
      'R7.2 the refresh token cannot be stored (%s): 500, and the account is removed again',
      async (kind) => {
        const email = uniqueEmail()
        failure = kind
        const answer = await register(email)
        failure = 'none'
        expectError(answer, 500, MESSAGES.internal)
        // nothing was made: the password logs nobody in, and the address registers anew
        expectError(
          await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } }),
          401,
          MESSAGES.invalidCredentials,
        )
        expect((await register(email)).status).toBe(200)
        expect(service.logs().some((line) => line.event === 'registration_undone')).toBe(true)
      },
    )

    it('R7.2 neither the session stored nor the account removed: 503 write_outcome_unknown, and the retry is a 409', async () => {
      const email = uniqueEmail()
      failure = 'session and undo'
      const answer = await register(email)
      failure = 'none'
      expectError(answer, 503, 'The change may or may not have been applied; retry')
      expect(answer.headers['retry-after']).toBe('1')
      expectError(await register(email), 409, MESSAGES.emailTaken)
    })
  })

  describe('R7.3 a write whose outcome is unknown is a 503', () => {
    let lost = false
    let service: TestService
    /** Writes that are applied, and whose answer is then lost, while `lost` is true. */
    const losingAnswers = (stores: Stores): Stores => {
      const answerLost = () => {
        throw new StorageError('answer lost', {
          cause: new Error('no answer within 1000 ms'),
          outcomeUnknown: true,
        })
      }
      const { users, sessions } = stores
      return {
        ...stores,
        users: {
          ...users,
          findByEmail: (email) => users.findByEmail(email),
          findById: (id) => users.findById(id),
          updatePasswordHash: (id, hash) => users.updatePasswordHash(id, hash),
          create: async (user) => {
            const result = await users.create(user)
            return lost ? answerLost() : result
          },
        },
        sessions: {
          ...sessions,
          rotate: async (userId, current, next, now) => {
            const result = await sessions.rotate(userId, current, next, now)
            return lost ? answerLost() : result
          },
        },
      }
    }
    beforeAll(async () => {
      service = await startTestService(backend, { wrapStores: losingAnswers })
    })
    afterAll(() => service.close())

    it('R7.3 503 "The change may or may not have been applied; retry" with Retry-After, and a retry tells what happened', async () => {
      const user = await registerUser(service.app)
      const email = uniqueEmail()
      lost = true
      const register = await call(service.app, 'POST', '/auth/register', {
        body: { email, password: PASSWORD },
      })
      const refresh = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: user.refreshToken },
      })
      lost = false
      for (const reply of [register, refresh]) {
        expectError(reply, 503, 'The change may or may not have been applied; retry')
        expect(reply.headers['retry-after']).toBe('1')
      }
      // both were applied: the retry of the registration finds the account, the token was rotated
      expectError(
        await call(service.app, 'POST', '/auth/register', { body: { email, password: PASSWORD } }),
        409,
        MESSAGES.emailTaken,
      )
      expect(
        (await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })).status,
      ).toBe(200)
      expectError(
        await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }),
        401,
        MESSAGES.refreshTokenInvalid,
      )
    })
  })
})
