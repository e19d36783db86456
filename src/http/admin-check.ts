import type { FastifyRequest } from 'fastify'
import type { AdminGuard } from '../admin/admin-guard.js'
import { callerOf } from './authenticate.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin's account id, as the admin check found it; set on the admin endpoints only. */
    adminId: string
  }
}

/**
 * docs/api.md R4.27.2, as a preValidation hook of the scope of every admin endpoint: the caller's session live, its
 * stored role ADMIN_ROLE (and with ADMIN_REQUIRE_MFA its second factor), before the query or the body is validated or
 * anything is read: a refused caller learns nothing of what a request would have found.
 */
export function createAdminCheck(authorize: AdminGuard) {
  return async (request: FastifyRequest): Promise<void> => {
    const admin = await authorize(callerOf(request))
    request.adminId = admin.id
  }
}
