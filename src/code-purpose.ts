/** What a one-time e-mail code is for (docs/api.md §4.14). */
export const CODE_PURPOSES = [
  'register',
  'login',
  'reset_password',
  'verify_email',
  'change_email',
  'delete_account',
  'manage_factors',
] as const
export type CodePurpose = (typeof CODE_PURPOSES)[number]

/** The purposes anyone may ask a code for, for any address (POST /auth/email/send-code). */
export const PUBLIC_CODE_PURPOSES = ['register', 'login', 'reset_password'] as const
export type PublicCodePurpose = (typeof PUBLIC_CODE_PURPOSES)[number]

/** The purposes an account asks a code for (POST /auth/me/send-code). */
export const ACCOUNT_CODE_PURPOSES = [
  'verify_email',
  'change_email',
  'delete_account',
  'manage_factors',
] as const
export type AccountCodePurpose = (typeof ACCOUNT_CODE_PURPOSES)[number]
