import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import type { Terminal } from '../../src/commands/terminal.js'
import { runUsersCommand } from '../../src/commands/users.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { registerUser } from '../support/http.js'
import { startTestService, TEST_ENV, type TestService } from '../support/test-service.js'
import { ADMIN_ROLE, newAdmin } from './admin-harness.js'

/** A stdin that is no terminal and holds nothing. */
const pipedStdin: Terminal = {
  interactive: false,
  readSecret: () => Promise.reject(new Error('not a terminal')),
  ask: () => Promise.reject(new Error('not a terminal')),
  readLine: async () => null,
}

const WARNING =
  `tessera users: warning: no active account has the role ${ADMIN_ROLE} (ADMIN_ROLE) now: nobody can use the admin ` +
  `API until one is given it (tessera users set-role <email|id> ${ADMIN_ROLE})\n`

/**
 * docs/api.md R4.27.8: `tessera users` is not held to the last-admin rule, and warns when a change leaves no active
 * admin; run in this process, on each SQL engine, beside a service on the same store.
 */
describe.each(backends.filter((backend) => !backend.redis))(
  'tessera users and the last admin [$name]',
  (backend) => {
    let instance: BackendInstance
    let service: TestService
    beforeAll(async () => {
      instance = await backend.setup()
      service = await startTestService(backend, { instance })
    })
    afterAll(async () => {
      await service?.close()
      await instance?.teardown()
    })

    const users = async (...args: string[]) => {
      let stdout = ''
      let stderr = ''
      const code = await runUsersCommand([...args, '--json'], {
        stdout: (text) => {
          stdout += text
        },
        stderr: (text) => {
          stderr += text
        },
        terminal: pipedStdin,
        clock: systemClock,
        environment: async () => ({ ...TEST_ENV, ...instance.env }),
      })
      return { code, stdout, stderr }
    }

    it('R4.27.8 set-role, disable and delete take the last admin away, with a warning; not while another remains', async () => {
      const first = await newAdmin(service)
      const second = await newAdmin(service)
      // another admin remains: no warning
      expect(await users('set-role', first.id, 'user')).toMatchObject({ code: 0, stderr: '' })
      // the last one: done all the same, and said
      const disabled = await users('disable', second.id)
      expect(disabled).toMatchObject({ code: 0, stderr: WARNING })
      expect(JSON.parse(disabled.stdout)).toMatchObject({ status: 'disabled', changed: true })
      expect(await service.stores.users.countActive(ADMIN_ROLE)).toBe(0)
      // a change of no admin says nothing
      const user = await registerUser(service.app)
      expect(await users('disable', user.id)).toMatchObject({ code: 0, stderr: '' })
      // given back, then demoted and deleted as the last one
      expect(await users('enable', second.id)).toMatchObject({ code: 0, stderr: '' })
      expect(await users('set-role', second.id, 'support')).toMatchObject({ code: 0, stderr: WARNING })
      expect(await users('set-role', second.id, ADMIN_ROLE)).toMatchObject({ code: 0, stderr: '' })
      expect(await users('delete', second.id, '--yes')).toMatchObject({ code: 0, stderr: WARNING })
      expect(await service.stores.users.findById(second.id)).toBeNull()
    })

    it('R4.27.8 the events of the shell keep the reason operator, without an actor', async () => {
      const admin = await newAdmin(service)
      expect((await users('revoke', admin.id)).code).toBe(0)
      const [latest] = await service.stores.audit.page({ userId: admin.id, limit: 1 })
      expect(latest).toMatchObject({ type: 'sessions_revoked', reason: 'operator' })
      expect(latest).not.toHaveProperty('actor')
    })
  },
)
