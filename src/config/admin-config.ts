import { ROLE_NAME } from '../role-name.js'
import { ConfigError } from './config-error.js'
import { type EnvReader, shownValue } from './env-reader.js'

/** Who may use the admin API, and how (docs/api.md §4.27). */
export interface AdminConfig {
  /**
   * ADMIN_ROLE: the role of the accounts that are admins (default `tessera-admin`: applications use roles such as
   * `admin` for their own purposes, and must not hand those users this API by accident).
   */
  role: string
  /**
   * ADMIN_REQUIRE_MFA (default true): an admin must have a confirmed second factor and a session established with one
   * (docs/api.md R4.27.3).
   */
  requireMfa: boolean
}

export const DEFAULT_ADMIN_ROLE = 'tessera-admin'

/** ADMIN_ROLE, a role's name other than `user` (which every account has), and ADMIN_REQUIRE_MFA. */
export function readAdminConfig(read: EnvReader): AdminConfig {
  const role = read.string('ADMIN_ROLE', DEFAULT_ADMIN_ROLE)
  if (!ROLE_NAME.test(role))
    throw new ConfigError(
      'ADMIN_ROLE',
      `must be a role's name: 1 to 32 of a-z 0-9 _ - starting with a letter, got ${shownValue(role)}`,
    )
  if (role === 'user')
    throw new ConfigError('ADMIN_ROLE', 'must not be user, the role of every account that was given none')
  return {
    role,
    requireMfa: read.oneOf('ADMIN_REQUIRE_MFA', ['true', 'false'], 'true') === 'true',
  }
}
