import { createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { DataKeyError } from '../errors.js'
import { memoizeSuccess } from '../memoize-success.js'
import { openText as open, sealText as seal } from '../sealed-text.js'
import type { ServiceKeyStore } from '../storage/stores.js'

/**
 * What keeps second factors unreadable from the store alone (docs/api.md §4.25, "Secrets"): TOTP secrets sealed,
 * recovery codes as keyed digests, both under one **data key** of 256 random bits kept in the store's `service_keys`
 * (name `mfa`), itself sealed under a key derived from AUTH_JWT_SECRET. Rotating that secret does not void a factor:
 * while the old secret is in AUTH_JWT_PREVIOUS_SECRETS, the data key still opens with it and is sealed again under the
 * new one (a compare-and-swap, so that instances starting together agree); once every instance has done so, the
 * old secret can go. The data key never changes: nothing sealed with it needs touching.
 */
export interface FactorSecrets {
  /** The sealed form of a TOTP secret (base32) for factor `factorId`: readable only with the data key, for it alone. */
  seal(factorId: string, secret: string): Promise<string>
  /** The TOTP secret sealed for factor `factorId`; null when it does not open (another row's, tampered). */
  open(factorId: string, sealed: string): Promise<string | null>
  /** The keyed digest (64 hexadecimal digits) under which the account's recovery code is stored. */
  recoveryDigest(userId: string, code: string): Promise<string>
  /**
   * Reads (or makes) the data key and seals it again under the current secret when a previous one opened it. Called
   * once the port is open; every other method waits for it. Rejects with DataKeyError when no secret opens the stored
   * key: factors cannot be checked, and the failure is the operator's to fix (a secret removed too early).
   */
  ready(): Promise<void>
}

export interface FactorSecretsDeps {
  keys: ServiceKeyStore
  /** AUTH_JWT_SECRET: what the data key is sealed under. */
  secret: string
  /** AUTH_JWT_PREVIOUS_SECRETS: tried to open the data key when the current secret does not. */
  previousSecrets: readonly string[]
}

const KEY_NAME = 'mfa'
const WRAP_INFO = 'tessera data key wrap v1'
const TOTP_INFO = 'tessera totp secrets v1'
const RECOVERY_INFO = 'tessera recovery codes v1'

export function createFactorSecrets(deps: FactorSecretsDeps): FactorSecrets {
  const wrapKey = (secret: string) => Buffer.from(hkdfSync('sha256', secret, '', WRAP_INFO, 32))
  const current = wrapKey(deps.secret)
  const previous = deps.previousSecrets.map(wrapKey)

  const load = async () => {
    let stored = await deps.keys.get(KEY_NAME)
    if (stored === null) {
      const fresh = seal(current, KEY_NAME, randomBytes(32).toString('base64url'))
      stored = await deps.keys.putIfAbsent(KEY_NAME, fresh)
    }
    let dataKey = open(current, KEY_NAME, stored)
    if (dataKey === null) {
      for (const key of previous) {
        dataKey = open(key, KEY_NAME, stored)
        if (dataKey !== null) break
      }
      if (dataKey === null) throw new DataKeyError()
      // sealed again under the current secret; another instance may have done it first, which is as good
      await deps.keys.replace(KEY_NAME, stored, seal(current, KEY_NAME, dataKey))
    }
    const key = Buffer.from(dataKey, 'base64url')
    return {
      totp: Buffer.from(hkdfSync('sha256', key, '', TOTP_INFO, 32)),
      recovery: Buffer.from(hkdfSync('sha256', key, '', RECOVERY_INFO, 32)),
    }
  }
  // a failure is not remembered: the next use tries the store again
  const keys = memoizeSuccess(load)

  return {
    seal: async (factorId, secret) => seal((await keys()).totp, factorId, secret),
    open: async (factorId, sealed) => open((await keys()).totp, factorId, sealed),
    recoveryDigest: async (userId, code) =>
      createHmac('sha256', (await keys()).recovery)
        .update(`${userId}:${code}`)
        .digest('hex'),
    ready: async () => {
      await keys()
    },
  }
}
