import type { Account } from './account.js'

/** A kind of second factor that a challenge can be completed with (docs/api.md §4.25). */
export type ChallengeFactor = 'totp' | 'passkey' | 'recovery_code'

/**
 * What a first factor (a password, a mailed code, a provider, a password reset) answers for an account with a second
 * factor, in place of the account: no tokens, and a ticket that `verifyMfa` (or `loginWithPasskey`, when `factors`
 * has `passkey`) completes. The ticket is good for five minutes, once, and five tries.
 */
export interface MfaChallenge {
  /** Always true: what tells a challenge from an account (`'mfaRequired' in result`). */
  mfaRequired: true
  /** 43 base64url characters: what `verifyMfa` and `loginWithPasskey` take (the API's `mfa_ticket`). */
  mfaTicket: string
  /** The kinds the account can complete it with: `totp`, `passkey`, `recovery_code`. */
  factors: ChallengeFactor[]
}

/** What a sign-in by a first factor resolves with: the account, logged in, or the second step it asks for. */
export type SignIn = Account | MfaChallenge

/** How `verifyMfa` completes a challenge: the six digits of the authenticator app, or one of the recovery codes. */
export type SecondFactorProof = { code: string } | { recoveryCode: string }

/**
 * How adding a factor proves that the account's holder is present: the password, or, for an account without one, a
 * code mailed for the purpose `manage_factors` (`sendCode({ purpose: 'manage_factors' })`).
 */
export type HolderProof = { password: string } | { code: string }

/** A pending authenticator app (`setupTotp`), which counts for nothing until `confirmTotp` takes its first code. */
export interface TotpSetup {
  /** 32 hexadecimal digits: what `confirmTotp` takes. */
  factorId: string
  /** The shared secret, base32: what a person types into an app that cannot scan the QR code. */
  secret: string
  /** The `otpauth://totp/` URI that the QR code holds. */
  uri: string
  /** The URI as a QR code: an `image/svg+xml` data URL, for an `<img src>`. */
  qrCode: string
}

/** A confirmed second factor of the account, as `factors()` lists it. */
export interface Factor {
  /** 32 hexadecimal digits: what `removeFactor` takes. */
  id: string
  /** An authenticator app, or a passkey. */
  type: 'totp' | 'passkey'
  /** The name it was given, or the service's default for its kind. */
  name: string
  /** When it was added, ISO 8601 in UTC (the API's `created_at`). */
  createdAt: string
  /** When it last completed a sign-in, ISO 8601 in UTC (the API's `last_used_at`); null before the first. */
  lastUsedAt: string | null
}

/**
 * The browser's half of a passkey: the WebAuthn ceremonies, with the options as the service sends them (JSON, binary
 * values in base64url) and the credential as it takes it back (the same JSON form). `@tessera/client/passkeys`
 * exports the browser's own as `passkeys`; the core leaves them out to stay small.
 */
export interface PasskeyCeremonies {
  /** `navigator.credentials.create`: a new passkey, for the service's creation options. */
  create(options: PublicKeyCredentialCreationOptionsJSON): Promise<object>
  /** `navigator.credentials.get`: an assertion of a passkey, for the service's request options. */
  get(options: PublicKeyCredentialRequestOptionsJSON): Promise<object>
}
