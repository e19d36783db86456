export type { Account, Credentials, ProfileChanges, Registration } from './account.js'
export type { AccountCodePurpose, CodeRequest, DeletionProof, PublicCodePurpose } from './email-code.js'
export type { Popup, PopupOpener, ProviderLoginOptions } from './provider-popup.js'
export type { RefreshLocks } from './refresh-lock.js'
export type {
  ChallengeFactor,
  Factor,
  HolderProof,
  MfaChallenge,
  PasskeyCeremonies,
  SecondFactorProof,
  SignIn,
  TotpSetup,
} from './second-factor.js'
export type { LogoutScope, Session } from './session.js'
export type { SessionEndReason, TesseraClient, TesseraClientOptions } from './tessera-client.js'
export { createTesseraClient } from './tessera-client.js'
export type { FieldError } from './tessera-error.js'
export { TesseraError } from './tessera-error.js'
export type { TokenPair, TokenStorage } from './token-store.js'
