/** What a code asked for by anyone, for any address, is for (`POST /auth/email/send-code`). */
export type PublicCodePurpose = 'register' | 'login' | 'reset_password'

/** What a code asked for by the logged-in account is for (`POST /auth/me/send-code`). */
export type AccountCodePurpose = 'verify_email' | 'change_email' | 'delete_account' | 'manage_factors'

/**
 * What `sendCode` takes: the address for a public purpose; nothing more for `verify_email`, `delete_account` and
 * `manage_factors` (adding a second factor to an account without a password), whose code goes to the account's
 * address; the new address for `change_email`, whose code goes there.
 */
export type CodeRequest =
  | { purpose: PublicCodePurpose; email: string }
  | { purpose: 'verify_email' | 'delete_account' | 'manage_factors' }
  | { purpose: 'change_email'; newEmail: string }

/** How `deleteAccount` confirms the deletion: the password, or a code mailed for the purpose `delete_account`. */
export type DeletionProof = { password: string } | { code: string }
