import { ConfigError } from './config-error.js'
import type { EnvReader } from './env-reader.js'

/** Second factors (docs/api.md §4.25). */
export interface MfaConfig {
  /** MFA_ISSUER: the issuer an authenticator app shows beside the account (default MAIL_PRODUCT_NAME). */
  issuer: string
}

/** MFA_ISSUER: one line of at most 64 characters, without a colon (the URI's label separator). */
export function readMfaConfig(read: EnvReader, productName: string): MfaConfig {
  const issuer = read.string('MFA_ISSUER', productName)
  if (issuer.length > 64 || /[\r\n:]/.test(issuer))
    throw new ConfigError('MFA_ISSUER', 'must be one line of at most 64 characters without a colon')
  return { issuer }
}
