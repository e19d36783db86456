// Signing an admin in through the client library: the password, then the second step the account asks for (the
// authenticator app's code, or one of its recovery codes; docs/api.md §4.25).

import type { Account, MfaChallenge, TesseraClient } from './client.js'
import { $, input } from './dom.js'

/** Runs an act of the admin's: one at a time, its failure shown (console.ts). */
export type Run = (label: string, action: () => Promise<void>) => Promise<void>

export interface SignInDeps {
  client: TesseraClient
  run: Run
  /** The account is signed in, with both factors if it has a second one. */
  signedIn(account: Account): Promise<void>
}

export interface SignInForm {
  /** Shows the form at its first step, emptied. */
  show(): void
}

export function createSignIn({ client, run, signedIn }: SignInDeps): SignInForm {
  let challenge: MfaChallenge | null = null
  let recoveryCode = false

  function render() {
    $('password-form').hidden = challenge !== null
    $('second-step-form').hidden = challenge === null
    if (challenge === null) return
    const takesApp = challenge.factors.includes('totp')
    const takesRecovery = challenge.factors.includes('recovery_code')
    const recovery = recoveryCode || !takesApp
    $('second-step-label').textContent = recovery ? 'Recovery code' : 'Code from the authenticator app'
    $('second-step-lead').textContent = recovery
      ? 'Enter one of the recovery codes kept when the second factor was turned on: each one works once.'
      : 'Enter the six digits the authenticator app shows for this account.'
    const code = input('second-step-code')
    code.inputMode = recovery ? 'text' : 'numeric'
    code.maxLength = recovery ? 64 : 6
    code.autocomplete = recovery ? 'off' : 'one-time-code'
    $('second-step-switch').textContent = recovery ? 'Use the authenticator app' : 'Use a recovery code'
    $('second-step-switch').hidden = !(takesApp && takesRecovery)
    // an account whose only factor is a passkey: this console does not take passkeys, its recovery codes work
    $('second-step-passkey').hidden = takesApp || !challenge.factors.includes('passkey')
  }

  function show() {
    challenge = null
    recoveryCode = false
    input('sign-in-password').value = ''
    input('second-step-code').value = ''
    render()
  }

  $('password-form').addEventListener('submit', (event) => {
    event.preventDefault()
    const email = input('sign-in-email').value
    const password = input('sign-in-password').value
    run('Signing in', async () => {
      const result = await client.login({ email, password })
      input('sign-in-password').value = ''
      if ('mfaRequired' in result) {
        challenge = result
        recoveryCode = false
        input('second-step-code').value = ''
        render()
        $('second-step-code').focus()
        return
      }
      // an account without a second factor: the admin API says whether it may use the console
      await signedIn(result)
    })
  })

  $('second-step-form').addEventListener('submit', (event) => {
    event.preventDefault()
    if (challenge === null) return
    const { mfaTicket, factors } = challenge
    const typed = input('second-step-code').value.trim()
    const recovery = recoveryCode || !factors.includes('totp')
    run('Signing in', async () => {
      try {
        const account = await client.verifyMfa(
          mfaTicket,
          recovery ? { recoveryCode: typed } : { code: typed },
        )
        challenge = null
        render()
        await signedIn(account)
      } finally {
        input('second-step-code').value = ''
      }
    })
  })

  $('second-step-switch').addEventListener('click', () => {
    recoveryCode = !recoveryCode
    input('second-step-code').value = ''
    render()
    $('second-step-code').focus()
  })

  $('second-step-cancel').addEventListener('click', () => {
    show()
    $('sign-in-email').focus()
  })

  return { show }
}
