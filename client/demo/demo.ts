// The script of the demo page (GET /demo, docs/api.md 4.10). The client's build type-checks it (demo/tsconfig.json)
// and writes it to dist/demo/demo.js (scripts/build-demo.mjs); the service serves it as /demo/demo.js, beside the
// built library as /demo/client.js, which it imports. The browser tests (test/demo/*.browser.test.ts) run it in
// Chromium.

import type { Account, Factor, MfaChallenge, ProfileChanges, Session, SignIn, TotpSetup } from './client.js'

/** The library as the page loads it: `/demo/client.js`, the built dist/index.js. */
type Library = typeof import('./client.js')
/** Its passkeys, the second entry point: `/demo/passkeys.js`, the built dist/passkeys.js. */
type Passkeys = typeof import('./passkeys.js')
/** What the form of a logged-out tab does: log in, register, or reset the password or log in with a mailed code. */
type Mode = 'login' | 'register' | 'reset' | 'code'
type NoticeKind = 'ok' | 'error' | 'info'
/** Which input of the page shows the refused field of a 400 (docs/api.md R1.6), by its JSON Pointer. */
type FieldInputs = Readonly<Record<string, string>>
/** What the page knows and shows. */
interface PageState {
  mode: Mode
  /** In the modes `reset` and `code`: whether a code was sent, so that the form asks for it. */
  codeSent: boolean
  /** Whether a code to verify the address was sent, so that the account shows the form that takes it. */
  verifying: boolean
  /** What this tab shows: the client's state as of its last call. */
  loggedIn: boolean
  /** The account as the service last described it. */
  account: Account | null
  /** The access token stored when this tab last looked, to tell when the pair changes and why. */
  access: string | null
  /** When this tab saw the pair change (milliseconds since the epoch), and why. */
  changedAt: number | null
  changedWhy: string
  /** Whether this tab has had an answer to a call that changes the pair since the last change it saw. */
  ownChange: boolean
  /** The account's sessions as the service last listed them for this tab; null before the first list of a login. */
  sessions: Session[] | null
  /** Why the last list of the sessions failed; null when it did not. */
  sessionsProblem: string | null
  /** The providers the service signs in with (GET /auth/oauth/providers), listed when the page opens. */
  providers: string[]
  /** The second step that a first factor asked for, until it is completed or given up; null when none is. */
  challenge: MfaChallenge | null
  /** Whether the second step takes one of the recovery codes rather than the authenticator app's code. */
  recoveryCode: boolean
  /** The account's second factors as the service last listed them for this tab; null before the first list. */
  factors: Factor[] | null
  /** Why the last list of the factors failed; null when it did not. */
  factorsProblem: string | null
  /** What is being added, while the form asks for the proof that it is the account's holder; null otherwise. */
  adding: 'totp' | 'passkey' | null
  /** Whether that proof is a mailed code (an account without a password) rather than the password. */
  proofByCode: boolean
  /** The authenticator app being added, until its first code turns it on. */
  totp: TotpSetup | null
  /** The recovery codes the service just gave, shown this once, until the reader says they are kept. */
  recoveryCodes: string[] | null
  /** How many requests this tab has sent: whether a failed action reached the service at all. */
  sent: number
  busy: boolean
}
/** The claims of an access token that the page shows. */
interface Claims {
  exp: number
  iat: number
  sub?: string
}
/** The API's envelope (docs/api.md R1.2). */
interface Envelope<Data> {
  code: number
  message: string
  data: Data
}
/** `GET /auth/me`'s data, as the API names it (docs/api.md 2.1). */
interface AccountData {
  id: string
  email: string
  email_verified: boolean
  username: string | null
  nickname: string | null
  avatar_url: string | null
  bio: string | null
  role: string
  status: 'active' | 'disabled'
  password_set: boolean
  providers: string[]
  created_at: string
  updated_at: string
}

/** The service this page was served by, path prefix included (the page is its `demo`). */
const baseUrl = new URL('.', window.location.href).href.replace(/\/$/, '')
const timeFormat = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
})
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
/** The calls that change the stored pair. */
const CHANGING_PATHS = [
  '/auth/login',
  '/auth/login/email-code',
  '/auth/register',
  '/auth/password/reset',
  '/auth/password/change',
  '/auth/refresh',
  '/auth/delete-refresh-token',
  '/auth/delete',
  '/auth/mfa/verify',
  '/auth/passkeys/login/verify',
]
/** The inputs of the form of a logged-out tab: the reset's new password goes in the password input. */
const AUTH_FIELDS: FieldInputs = {
  '/email': 'email',
  '/password': 'password',
  '/new_password': 'password',
  '/verification_code': 'code',
}
/** The input of the second step of a sign-in. */
const MFA_FIELDS: FieldInputs = { '/code': 'mfa-code', '/recovery_code': 'mfa-code' }
/** The inputs of the forms that add a factor. */
const FACTOR_FIELDS: FieldInputs = {
  '/password': 'factor-password',
  '/verification_code': 'factor-code',
  '/name': 'passkey-name',
  '/code': 'totp-code',
}
/** The inputs of the profile's form. */
const PROFILE_FIELDS: FieldInputs = { '/username': 'username', '/nickname': 'nickname', '/bio': 'bio' }
/** Every input that shows a refused field's message under it (its `<id>-error`). */
const FIELD_INPUTS = [
  'email',
  'password',
  'code',
  'verify-code',
  'username',
  'nickname',
  'bio',
  'avatar-file',
  'mfa-code',
  'factor-password',
  'factor-code',
  'passkey-name',
  'totp-code',
]

/** An element of the page, which has it: a missing one is a mistake of this script or of index.html. */
function $(id: string): HTMLElement {
  const element = document.getElementById(id)
  if (element === null) throw new Error(`The page has no #${id}`)
  return element
}

/** An input of the page's form. */
function input(id: string): HTMLInputElement {
  const element = $(id)
  if (!(element instanceof HTMLInputElement)) throw new Error(`#${id} is not an input`)
  return element
}

/** A text area of the page's form. */
function textArea(id: string): HTMLTextAreaElement {
  const element = $(id)
  if (!(element instanceof HTMLTextAreaElement)) throw new Error(`#${id} is not a textarea`)
  return element
}

start()

async function start() {
  let library: Library
  try {
    library = await import('./client.js')
  } catch {
    await showClientMissing()
    return
  }
  // the passkeys, where this browser has WebAuthn and the service serves them: the page goes without them otherwise
  let passkeys: Passkeys | null = null
  try {
    const loaded = await import('./passkeys.js')
    if (loaded.passkeysSupported()) passkeys = loaded
  } catch {}
  createPage(library, passkeys)
}

/** The built client could not be loaded: say why, with the service's own message when it gave one. */
async function showClientMissing() {
  let message = 'The client library could not be loaded from /demo/client.js.'
  try {
    const answer = await window.fetch(new URL('./client.js', import.meta.url))
    const body: unknown = await answer.json()
    if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
      message = body.message
    }
  } catch {}
  const banner = $('client-missing')
  banner.textContent = message
  banner.hidden = false
  for (const card of document.querySelectorAll<HTMLElement>('.card')) card.hidden = true
  setPill('out', 'Client not loaded')
}

function createPage({ createTesseraClient, TesseraError }: Library, passkeys: Passkeys | null) {
  const client = createTesseraClient({
    baseUrl,
    storage: window.localStorage,
    fetch: recordingFetch,
    passkeys: passkeys?.passkeys,
    onSessionEnd: (reason) => {
      state.loggedIn = false
      state.account = null
      state.verifying = false
      if (reason === 'refresh_refused') {
        notice('info', 'Your session has ended', 'The service refused to refresh the tokens: log in again.')
      } else if (reason === 'ended_elsewhere') {
        notice('info', 'Your session has ended', 'You logged out in another tab: log in again.')
      }
      render()
    },
  })
  const state: PageState = {
    mode: 'login',
    codeSent: false,
    verifying: false,
    loggedIn: client.isLoggedIn(),
    account: null,
    access: client.getAccessToken(),
    changedAt: null,
    changedWhy: '',
    ownChange: false,
    sessions: null,
    sessionsProblem: null,
    providers: [],
    challenge: null,
    recoveryCode: false,
    factors: null,
    factorsProblem: null,
    adding: null,
    proofByCode: false,
    totp: null,
    recoveryCodes: null,
    sent: 0,
    busy: false,
  }

  client.onChange((loggedIn) => {
    state.loggedIn = loggedIn
    tokensChanged(false)
  })
  // what another tab changes in localStorage shows at once in the tokens' state; the client itself learns of a
  // logout elsewhere on its next call, which then ends this tab's session (onSessionEnd 'ended_elsewhere')
  window.addEventListener('storage', () => {
    if (!state.loggedIn && client.isLoggedIn()) state.loggedIn = true
    tokensChanged(true)
  })

  /** Every request the client makes, shown in "Requests from this tab". */
  async function recordingFetch(request: Request): Promise<Response> {
    const url = new URL(request.url)
    const path = url.pathname
    // the logout of the other sessions keeps this tab's pair
    const changesPair = CHANGING_PATHS.includes(path) && url.searchParams.get('scope') !== 'others'
    state.sent++
    const started = performance.now()
    try {
      const response = await window.fetch(request)
      if (changesPair && (response.ok || path === '/auth/delete-refresh-token')) {
        state.ownChange = true
      }
      logRequest(request.method, path + url.search, response.status, performance.now() - started)
      return response
    } catch (error) {
      logRequest(request.method, path + url.search, null, performance.now() - started)
      throw error
    }
  }

  function tokensChanged(fromStorageEvent: boolean) {
    const access = client.getAccessToken()
    if (access !== state.access) {
      const mine = state.ownChange && !fromStorageEvent
      const what =
        access === null ? 'logged out' : state.access === null ? 'logged in' : mine ? 'refreshed' : 'new pair'
      state.access = access
      state.changedAt = Date.now()
      state.changedWhy = mine ? what : `${what}, by another tab`
      state.ownChange = false
    }
    render()
  }

  // ---- actions

  /** One action of the reader's: one at a time; a failure shown, its refused fields under `fields`' inputs. */
  async function run(label: string, action: () => Promise<void>, fields: FieldInputs = AUTH_FIELDS) {
    if (state.busy) return
    state.busy = true
    setBusy(true)
    clearNotice()
    const sent = state.sent
    try {
      await action()
    } catch (error) {
      failed(label, error, state.sent > sent, fields)
    } finally {
      state.busy = false
      setBusy(false)
      render()
    }
  }

  function failed(label: string, error: unknown, reachedService: boolean, fields: FieldInputs) {
    if (error instanceof DOMException) {
      // the browser refused a passkey's ceremony: nothing the service said
      showResult(null, `${error.name}: ${error.message}`)
      notice(
        'error',
        `${label} failed`,
        error.name === 'NotAllowedError'
          ? 'The browser found no passkey to use, or its dialog was cancelled or timed out.'
          : error.message,
      )
      return
    }
    if (!(error instanceof TesseraError)) throw error
    if (!reachedService) {
      showResult(null, `Nothing was sent: ${error.message}.`)
    } else if (error.status === 0) {
      showResult(null, error.message)
      notice('error', `${label} failed`, 'The service cannot be reached. Is it running?')
      return
    } else {
      const data = error.errors.length > 0 ? { errors: error.errors } : null
      showResult(error.status, { code: error.status, message: error.message, data })
    }
    for (const { field, message } of error.errors) showFieldError(fields[field], message)
    if (state.loggedIn && !client.isLoggedIn()) {
      // the tokens are gone (another tab logged out) though this tab's client never held them: the same end
      state.loggedIn = false
      state.account = null
      notice('info', 'Your session has ended', 'This browser has no tokens any more: log in again.')
    } else if (state.loggedIn || $('notice').hidden) {
      // a session that ended during the call has said so already (onSessionEnd)
      const wait = error.retryAfter === null ? '' : `: try again in ${duration(error.retryAfter)}`
      notice('error', `${label} failed`, `${error.message}${wait}`)
    }
  }

  $('auth-form').addEventListener('submit', (event) => {
    event.preventDefault()
    const email = input('email').value
    const password = input('password').value
    const code = input('code').value.trim()
    clearFieldErrors()
    switch (state.mode) {
      case 'login':
        run('Login', async () => {
          const signIn = await client.login({ email, password })
          await signedIn(signIn, 'Logged in', (account) => `Welcome, ${account.email}.`)
        })
        break
      case 'register':
        run('Registration', async () => {
          const account = await client.register({ email, password })
          await loggedIn(account, 'Account created', `Welcome, ${account.email}.`)
        })
        break
      case 'reset':
        if (!state.codeSent) mailCode('reset_password', email)
        else
          run('Setting the password', async () => {
            const signIn = await client.resetPassword(email, code, password)
            await signedIn(
              signIn,
              'Password changed',
              (account) => `Welcome back, ${account.email}. Every other session of the account has ended.`,
            )
          })
        break
      case 'code':
        if (!state.codeSent) mailCode('login', email)
        else
          run('Login with the code', async () => {
            const signIn = await client.loginWithCode(email, code)
            await signedIn(signIn, 'Logged in', (account) => `Welcome, ${account.email}.`)
          })
        break
    }
  })

  /**
   * After a first factor: logged in, or, for an account with a second factor, the second step that it asks for
   * (`text` says what the login says, of the account).
   */
  async function signedIn(signIn: SignIn, title: string, text: (account: Account) => string) {
    if ('mfaRequired' in signIn) askSecondFactor(signIn, title === 'Password changed')
    else await loggedIn(signIn, title, text(signIn))
  }

  /** The second step: the form that takes the app's code, a recovery code, or a passkey. */
  function askSecondFactor(challenge: MfaChallenge, passwordChanged: boolean) {
    state.challenge = challenge
    // an account whose only factors are passkeys has no app to take a code from
    state.recoveryCode = !challenge.factors.includes('totp')
    state.codeSent = false
    // no pair came: the next change of the pair is not this answer's
    state.ownChange = false
    input('password').value = ''
    input('code').value = ''
    input('mfa-code').value = ''
    showResult(200, challenge)
    const changed = passwordChanged ? 'The password is changed and every session has ended. ' : ''
    notice('info', 'Second step', `${changed}This account has a second factor: one more step signs in.`)
    render()
    $($('mfa-code-field').hidden ? 'mfa-title' : 'mfa-code').focus()
  }

  /** After any way of logging in: the account, the form emptied for the next time, and the sessions listed. */
  async function loggedIn(account: Account, title: string, text: string) {
    state.account = account
    state.loggedIn = true
    state.mode = 'login'
    state.codeSent = false
    state.verifying = false
    state.challenge = null
    state.recoveryCode = false
    input('password').value = ''
    input('code').value = ''
    input('mfa-code').value = ''
    showResult(200, account)
    notice('ok', title, text)
    await relistSessions()
  }

  /** The first step of a reset or of a login with a code: a code mailed to the address, which the form then asks for. */
  function mailCode(purpose: 'reset_password' | 'login', email: string) {
    run('Sending the code', async () => {
      await client.sendCode({ email, purpose })
      state.codeSent = true
      input('code').value = ''
      showResult(200, { code: 200, message: 'Success', data: null })
      // the service answers the same whether or not the address has an account (docs/api.md §4.14)
      notice(
        'ok',
        'Code sent',
        `If an account has the address ${email.trim()}, a six-digit code is on its way to it.`,
      )
    }).then(() => {
      if (state.codeSent) $('code').focus()
    })
  }

  $('resend-code').addEventListener('click', () => {
    clearFieldErrors()
    mailCode(state.mode === 'reset' ? 'reset_password' : 'login', input('email').value)
  })

  $('verify').addEventListener('click', () =>
    run('Sending the code', async () => {
      await client.sendCode({ purpose: 'verify_email' })
      state.verifying = true
      input('verify-code').value = ''
      showResult(200, { code: 200, message: 'Success', data: null })
      notice(
        'ok',
        'Code sent',
        `A six-digit code is on its way to ${state.account?.email ?? 'your address'}.`,
      )
    }).then(() => {
      if (state.verifying) $('verify-code').focus()
    }),
  )

  $('verify-form').addEventListener('submit', (event) => {
    event.preventDefault()
    const code = input('verify-code').value.trim()
    clearFieldErrors()
    run(
      'Verification',
      async () => {
        const account = await client.verifyEmail(code)
        state.account = account
        state.verifying = false
        showResult(200, account)
        notice('ok', 'Address verified', `${account.email} is verified.`)
      },
      { '/verification_code': 'verify-code' },
    ).then(() => {
      // the form is gone with the button pressed: focus stays in the account's section
      if (!state.verifying && document.activeElement === document.body) $('account-title').focus()
    })
  })

  $('verify-cancel').addEventListener('click', () => {
    state.verifying = false
    clearFieldErrors()
    render()
    $('verify').focus()
  })

  $('whoami').addEventListener('click', () =>
    run('Who am I', async () => {
      const me = await client.me()
      state.account = me
      showResult(200, me)
      notice('ok', 'You are', `${me.email}, user ${me.id}.`)
    }),
  )

  $('call-protected').addEventListener('click', () =>
    run('The call', async () => {
      const response = await client.fetch('/auth/me')
      // the envelope as the API documents it (docs/api.md R1.2, R4.5); null when the answer is not JSON
      const body = (await response.json().catch(() => null)) as Envelope<AccountData> | null
      showResult(response.status, body)
      if (response.ok && body !== null) {
        state.account = accountOf(body.data)
        notice('ok', `GET /auth/me answered ${response.status}`, 'The protected call went through.')
      } else {
        notice('error', `GET /auth/me answered ${response.status}`, body?.message ?? response.statusText)
      }
    }),
  )

  $('logout').addEventListener('click', () =>
    run('Logout', async () => {
      await client.logout()
      state.account = null
      state.loggedIn = false
      state.verifying = false
      showResult(200, { code: 200, message: 'Success', data: null })
      notice(
        'ok',
        'Logged out',
        'The tokens are gone from this browser, and the refresh token from the service.',
      )
    }),
  )

  // ---- the profile and the providers

  $('profile-form').addEventListener('submit', (event) => {
    event.preventDefault()
    const account = state.account
    if (account === null) return
    // only what was changed is sent: a field left out stays as it is, an emptied one is cleared (null)
    const changes: ProfileChanges = {}
    const typed = {
      username: input('username').value.trim(),
      nickname: input('nickname').value,
      bio: textArea('bio').value,
    }
    for (const field of ['username', 'nickname', 'bio'] as const) {
      const value = typed[field] === '' ? null : typed[field]
      if (value !== account[field]) changes[field] = value
    }
    clearFieldErrors()
    run(
      'Saving the profile',
      async () => {
        let saved: Account
        try {
          saved = await client.updateProfile(changes)
        } catch (error) {
          // a username another account has: said under the field, as a refused value is
          if (error instanceof TesseraError && error.status === 409) showFieldError('username', error.message)
          throw error
        }
        state.account = saved
        showResult(200, saved)
        const what = Object.keys(changes).join(', ')
        notice('ok', 'Profile saved', what === '' ? 'Nothing had changed.' : `Changed: ${what}.`)
      },
      PROFILE_FIELDS,
    )
  })

  const avatarFile = input('avatar-file')
  avatarFile.addEventListener('change', () => {
    const file = avatarFile.files?.[0]
    if (file === undefined) return
    clearFieldErrors()
    run('Uploading the avatar', async () => {
      let saved: Account
      try {
        saved = await client.uploadAvatar(file, file.name)
      } catch (error) {
        // too large (413) or not an image the service takes (415): said under the input
        if (error instanceof TesseraError && (error.status === 413 || error.status === 415)) {
          showFieldError('avatar-file', error.message)
        }
        throw error
      }
      state.account = saved
      showResult(200, saved)
      notice('ok', 'Avatar uploaded', `${file.name} is the account's avatar now.`)
    }).finally(() => {
      // the same file may be chosen again
      avatarFile.value = ''
    })
  })

  $('avatar-remove').addEventListener('click', () =>
    run('Removing the avatar', async () => {
      const saved = await client.removeAvatar()
      state.account = saved
      showResult(200, saved)
      notice('ok', 'Avatar removed', 'The account has no avatar any more.')
    }).then(() => {
      if (document.activeElement === document.body) avatarFile.focus()
    }),
  )

  $('provider-buttons').addEventListener('click', (event) => {
    const provider = buttonData(event, 'provider')
    if (provider === undefined) return
    const name = providerName(provider)
    clearFieldErrors()
    // the action's first step, in this click's own task: the client opens the popup there, or the browser blocks it
    run(`Signing in with ${name}`, async () => {
      let signIn: SignIn
      // the pair comes from the popup's message, not from a request of this page: the change is this tab's own
      state.ownChange = true
      try {
        signIn = await client.loginWithProvider(provider)
      } catch (error) {
        state.ownChange = false
        if (!(error instanceof TesseraError)) throw error
        // the popup's answer, or its absence: nothing of this page's requests
        showResult(error.status === 0 ? null : error.status, error.message)
        notice('error', `Signing in with ${name} failed`, error.message)
        return
      }
      await signedIn(signIn, 'Logged in', (account) => `Welcome, ${account.email}: signed in with ${name}.`)
    })
  })

  $('linked-providers').addEventListener('click', (event) => {
    const provider = buttonData(event, 'provider')
    if (provider === undefined) return
    run(`Unlinking ${providerName(provider)}`, async () => {
      const account = await client.unlinkProvider(provider)
      state.account = account
      showResult(200, account)
      notice(
        'ok',
        `${providerName(provider)} unlinked`,
        `Signing in with ${providerName(provider)} no longer reaches this account.`,
      )
    }).then(() => {
      if (document.activeElement === document.body) $('profile-title').focus()
    })
  })

  // ---- the second step of a sign-in, and the passkeys' sign-in

  $('mfa-form').addEventListener('submit', (event) => {
    event.preventDefault()
    const challenge = state.challenge
    if (challenge === null) return
    const typed = input('mfa-code').value.trim()
    const withRecoveryCode = state.recoveryCode
    clearFieldErrors()
    run(
      'The second step',
      async () => {
        const account = await client.verifyMfa(
          challenge.mfaTicket,
          withRecoveryCode ? { recoveryCode: typed } : { code: typed },
        )
        const how = withRecoveryCode ? 'a recovery code, now used up' : 'the authenticator app'
        await loggedIn(account, 'Logged in', `Welcome, ${account.email}: signed in with ${how}.`)
      },
      MFA_FIELDS,
    ).then(() => {
      // refused: another try, until the ticket's five are used up (then "Back to log in" starts again)
      if (state.challenge !== null) $('mfa-code').focus()
    })
  })

  $('mfa-switch').addEventListener('click', () => {
    state.recoveryCode = !state.recoveryCode
    input('mfa-code').value = ''
    clearFieldErrors()
    render()
    $('mfa-code').focus()
  })

  $('mfa-cancel').addEventListener('click', () => {
    state.challenge = null
    clearFieldErrors()
    clearNotice()
    render()
    $('email').focus()
  })

  $('mfa-use-passkey').addEventListener('click', () => {
    const challenge = state.challenge
    if (challenge === null) return
    clearFieldErrors()
    run('Signing in with a passkey', async () => {
      const account = await client.loginWithPasskey(challenge.mfaTicket)
      await loggedIn(account, 'Logged in', `Welcome, ${account.email}: signed in with a passkey.`)
    })
  })

  // no address and no password: the browser offers the passkeys it has for this site, and the one chosen says whose
  $('passkey-login').addEventListener('click', () => {
    clearFieldErrors()
    run('Signing in with a passkey', async () => {
      const account = await client.loginWithPasskey()
      await loggedIn(account, 'Logged in', `Welcome, ${account.email}: signed in with a passkey.`)
    })
  })

  // ---- the account's second factors

  $('add-totp').addEventListener('click', () => startAdding('totp'))
  $('add-passkey').addEventListener('click', () => startAdding('passkey'))

  /**
   * Opens the form that proves the account's holder present before a factor is added: the password, or, for an
   * account without one (made by a provider's sign-in), a code mailed for the purpose `manage_factors`.
   */
  function startAdding(kind: 'totp' | 'passkey') {
    clearFieldErrors()
    run('Adding a factor', async () => {
      // whether the account has a password: a tab opened logged in asks the service first
      const account = state.account ?? (await client.me())
      state.account = account
      state.proofByCode = !account.passwordSet
      if (state.proofByCode) {
        await client.sendCode({ purpose: 'manage_factors' })
        notice('ok', 'Code sent', `A six-digit code is on its way to ${account.email}.`)
      }
      state.adding = kind
      state.totp = null
      state.recoveryCodes = null
      for (const id of ['factor-password', 'factor-code', 'passkey-name']) input(id).value = ''
    }).then(() => {
      if (state.adding === kind) $(state.proofByCode ? 'factor-code' : 'factor-password').focus()
    })
  }

  $('factor-proof-form').addEventListener('submit', (event) => {
    event.preventDefault()
    const kind = state.adding
    if (kind === null) return
    const proofInput = state.proofByCode ? 'factor-code' : 'factor-password'
    const proof = state.proofByCode
      ? { code: input('factor-code').value.trim() }
      : { password: input('factor-password').value }
    const name = input('passkey-name').value.trim()
    clearFieldErrors()
    run(
      kind === 'totp' ? 'Adding an authenticator app' : 'Adding a passkey',
      async () => {
        try {
          if (kind === 'totp') {
            const setup = await client.setupTotp(proof)
            state.adding = null
            state.totp = setup
            input('totp-code').value = ''
            // the QR code's data URL is the image below: its first characters say what it is
            showResult(200, { ...setup, qrCode: `${setup.qrCode.slice(0, 40)}…` })
            notice('info', 'Scan the QR code', 'The app is not on yet: its first code turns it on.')
          } else {
            const factor = await client.registerPasskey(proof, name === '' ? undefined : name)
            state.adding = null
            showResult(200, factor)
            notice(
              'ok',
              'Passkey added',
              `“${factor.name}” signs in to this account now, without the address. Every other session of the account has ended.`,
            )
            await relistFactors()
          }
        } catch (error) {
          // a wrong password or code is a 400 without a field: said under the input that took it
          if (error instanceof TesseraError && error.status === 400 && error.errors.length === 0) {
            showFieldError(proofInput, error.message)
          }
          throw error
        }
      },
      FACTOR_FIELDS,
    ).then(() => {
      if (state.totp !== null) $('totp-code').focus()
      else if (state.adding === null && document.activeElement === document.body) $('factors-title').focus()
    })
  })

  $('totp-form').addEventListener('submit', (event) => {
    event.preventDefault()
    const setup = state.totp
    if (setup === null) return
    const code = input('totp-code').value.trim()
    clearFieldErrors()
    run(
      'Turning on the authenticator app',
      async () => {
        let codes: string[]
        try {
          codes = await client.confirmTotp(setup.factorId, code)
        } catch (error) {
          // not the app's code for now: said under the input
          if (error instanceof TesseraError && error.status === 400 && error.errors.length === 0) {
            showFieldError('totp-code', error.message)
          }
          throw error
        }
        state.totp = null
        state.recoveryCodes = codes
        showResult(200, { recoveryCodes: codes })
        notice(
          'ok',
          'Authenticator app on',
          'Every sign-in of this account now asks for its code. Every other session of the account has ended.',
        )
        await relistFactors()
      },
      FACTOR_FIELDS,
    ).then(() => {
      if (state.recoveryCodes !== null) $('recovery-done').focus()
    })
  })

  for (const cancel of ['factor-proof-cancel', 'totp-cancel']) {
    $(cancel).addEventListener('click', () => {
      // an app not turned on counts for nothing, and the service forgets it
      state.adding = null
      state.totp = null
      clearFieldErrors()
      render()
      $('factors-title').focus()
    })
  }

  $('new-recovery-codes').addEventListener('click', () =>
    run('New recovery codes', async () => {
      state.recoveryCodes = await client.newRecoveryCodes()
      showResult(200, { recoveryCodes: state.recoveryCodes })
      notice('ok', 'New recovery codes', 'The codes given before no longer work.')
    }).then(() => {
      if (state.recoveryCodes !== null) $('recovery-done').focus()
    }),
  )

  $('recovery-done').addEventListener('click', () => {
    state.recoveryCodes = null
    render()
    $('factors-title').focus()
  })

  $('refresh-factors').addEventListener('click', () =>
    run('Listing the factors', async () => {
      showResult(200, await listFactors())
    }),
  )

  $('factors').addEventListener('click', (event) => {
    const id = buttonData(event, 'factor')
    const factor = state.factors?.find((listed) => listed.id === id)
    if (factor === undefined) return
    run('Removing the factor', async () => {
      try {
        await client.removeFactor(factor.id)
      } finally {
        // also after a 404: the factor was removed meanwhile, and the list shows it gone
        await relistFactors()
      }
      showResult(200, { code: 200, message: 'Success', data: null })
      const after =
        state.factors?.length === 0
          ? 'Signing in no longer asks for a second step.'
          : 'Every other session of the account has ended.'
      notice('ok', 'Factor removed', `“${factor.name}” is removed. ${after}`)
    }).then(() => {
      if (document.activeElement === document.body) $('factors-title').focus()
    })
  })

  /** Lists the factors into the page; a failure shows in the list too, and is thrown. */
  async function listFactors(): Promise<Factor[]> {
    try {
      state.factors = await client.factors()
      state.factorsProblem = null
      return state.factors
    } catch (error) {
      state.factors = null
      state.factorsProblem = error instanceof TesseraError ? error.message : String(error)
      throw error
    }
  }

  /** The list again after an action on the factors, which is done whether or not the list follows (as sessions'). */
  async function relistFactors() {
    try {
      await listFactors()
    } catch (error) {
      if (!(error instanceof TesseraError) || !client.isLoggedIn()) throw error
    }
  }

  /** The providers the service signs in with; none when it cannot say (an older service, say). */
  async function listProviders() {
    try {
      state.providers = await client.providers()
    } catch (error) {
      if (!(error instanceof TesseraError)) throw error
      state.providers = []
    }
  }

  /** Lists the sessions into the page; a failure shows in the list too, and is thrown. */
  async function listSessions(): Promise<Session[]> {
    try {
      state.sessions = await client.sessions()
      state.sessionsProblem = null
      return state.sessions
    } catch (error) {
      state.sessions = null
      state.sessionsProblem = error instanceof TesseraError ? error.message : String(error)
      throw error
    }
  }

  /**
   * The list again, after a login or an action on the sessions: that action is done whether or not the list follows,
   * so a failure to list shows in the list alone. The end of the session (no tokens any more) goes on to `failed`.
   */
  async function relistSessions() {
    try {
      await listSessions()
    } catch (error) {
      if (!(error instanceof TesseraError) || !client.isLoggedIn()) throw error
    }
  }

  $('refresh-sessions').addEventListener('click', () =>
    run('Listing the sessions', async () => {
      showResult(200, await listSessions())
    }),
  )

  $('sessions').addEventListener('click', (event) => {
    const id = buttonData(event, 'session')
    const session = state.sessions?.find((listed) => listed.id === id)
    if (session === undefined) return
    run('Ending the session', async () => {
      try {
        await client.endSession(session.id)
      } finally {
        // also after a 404: the session was ended meanwhile, and the list shows it gone
        await relistSessions()
      }
      showResult(200, { code: 200, message: 'Success', data: null })
      notice(
        'ok',
        'Session ended',
        `${deviceName(session)} must log in again: its refresh token is refused from now on.`,
      )
    }).then(keepFocusInSessions)
  })

  $('end-other-sessions').addEventListener('click', () =>
    run('Logging out the other sessions', async () => {
      try {
        await client.logout({ scope: 'others' })
      } finally {
        await relistSessions()
      }
      showResult(200, { code: 200, message: 'Success', data: null })
      notice(
        'ok',
        'Other sessions ended',
        'Every other device must log in again: their refresh tokens are refused from now on. This one stays logged in.',
      )
    }).then(keepFocusInSessions),
  )

  /** The button pressed is gone with its session (or hidden, with the other sessions): focus stays in the section. */
  function keepFocusInSessions() {
    if (document.activeElement === document.body && !$('sessions-card').hidden) $('sessions-title').focus()
  }

  for (const [button, mode] of [
    ['mode-login', 'login'],
    ['mode-register', 'register'],
    ['mode-reset', 'reset'],
    ['mode-code', 'code'],
    ['back-to-login', 'login'],
  ] as const) {
    $(button).addEventListener('click', () => {
      state.mode = mode
      state.codeSent = false
      clearFieldErrors()
      clearNotice()
      render()
      // a flow with a code opens on its title, which says what it does; the tabs on the address
      $(mode === 'reset' || mode === 'code' ? 'flow-title' : 'email').focus()
    })
  }

  $('clear-activity').addEventListener('click', () => {
    $('activity').replaceChildren()
    $('activity-empty').hidden = false
  })

  // ---- rendering

  function render() {
    const { loggedIn, account } = state
    const email = account?.email
    setPill(
      loggedIn ? 'in' : 'out',
      loggedIn ? (email ? `Logged in as ${email}` : 'Logged in') : 'Logged out',
    )
    $('auth-panel').hidden = loggedIn
    $('session-panel').hidden = !loggedIn
    $('sessions-card').hidden = !loggedIn

    renderAuthForm()

    const claims = decodeClaims(client.getAccessToken())
    $('account-email').textContent = email ?? 'press “Who am I?” to ask the service'
    $('account-email').classList.toggle('muted', !email)
    $('account-id').textContent = account?.id ?? claims?.sub ?? '—'
    $('account-created').textContent = account?.createdAt
      ? dateFormat.format(new Date(account.createdAt))
      : '—'
    const verified = $('account-verified')
    verified.textContent = account ? (account.emailVerified ? 'Yes' : 'No') : '—'
    if (account) verified.dataset.state = account.emailVerified ? 'in' : 'out'
    else delete verified.dataset.state
    // a code is asked for once the account is known not to be verified: "Who am I?" tells a tab opened logged in
    $('verify').hidden = account === null || account.emailVerified || state.verifying
    $('verify-form').hidden = !loggedIn || !state.verifying
    $('verify-lead').textContent = `Enter the six digits of the code sent to ${email ?? 'your address'}.`

    const stored = client.isLoggedIn()
    const tokenState = $('token-state')
    tokenState.dataset.state = stored ? 'in' : 'out'
    tokenState.textContent = stored ? 'Logged in' : 'Logged out'
    $('token-state-note').textContent =
      loggedIn && !stored ? 'by another tab: this tab finds out on its next call' : ''
    renderProfile()
    $('access-issued').textContent = claims ? timeFormat.format(claims.iat * 1000) : '—'
    $('tokens-changed').textContent = state.changedAt ? timeFormat.format(state.changedAt) : '—'
    $('tokens-changed-why').textContent = state.changedAt ? `(${state.changedWhy})` : ''
    renderSessions()
    renderFactors()
    renderClock()
  }

  /** The form of a logged-out tab, as its mode and step ask. */
  function renderAuthForm() {
    const { mode, codeSent, challenge } = state
    const withCode = mode === 'reset' || mode === 'code'
    $('mode-login').setAttribute('aria-selected', String(mode === 'login'))
    $('mode-register').setAttribute('aria-selected', String(mode === 'register'))
    // the second step takes the place of the form, until it is completed or given up
    $('auth-form').hidden = challenge !== null
    $('mfa-form').hidden = challenge === null
    renderSecondStep()
    $('auth-tabs').hidden = withCode || challenge !== null
    $('flow-head').hidden = !withCode
    $('flow-title').textContent = mode === 'reset' ? 'Reset your password' : 'Log in with a code'
    $('flow-lead').textContent =
      mode === 'reset'
        ? 'We e-mail you a code; with it, you choose a new password and are logged in. Every other session of the account ends.'
        : 'We e-mail you a code that logs you in, without your password.'
    $('code-field').hidden = !withCode || !codeSent
    // a reset also takes the reset key of its mail, which wrong tries at the code never use up (docs/api.md R4.17)
    const code = input('code')
    code.maxLength = mode === 'reset' ? 64 : 6
    code.inputMode = mode === 'reset' ? 'text' : 'numeric'
    $('code-label').textContent =
      mode === 'reset' ? 'Code or reset key from the e-mail' : 'Code from the e-mail'
    $('password-field').hidden = mode === 'code' || (mode === 'reset' && !codeSent)
    $('password-label').textContent = mode === 'reset' ? 'New password' : 'Password'
    input('password').autocomplete = mode === 'login' ? 'current-password' : 'new-password'
    $('password-hint').hidden = mode === 'login'
    $('submit').textContent = {
      login: 'Log in',
      register: 'Create account',
      reset: codeSent ? 'Set the password and log in' : 'Send the code',
      code: codeSent ? 'Log in' : 'Send the code',
    }[mode]
    $('login-alternatives').hidden = mode !== 'login'
    $('code-alternatives').hidden = !withCode
    $('resend-code').hidden = !codeSent
    $('provider-sign-in').hidden =
      withCode || challenge !== null || (state.providers.length === 0 && passkeys === null)
    $('passkey-login').hidden = passkeys === null
    if (state.providers !== shownProviders) {
      $('provider-buttons').replaceChildren(...state.providers.map(providerButton))
      shownProviders = state.providers
    }
  }

  /** The second step's form: the app's code, or a recovery code; a passkey where the account has one. */
  function renderSecondStep() {
    const factors = state.challenge?.factors ?? []
    const recovery = state.recoveryCode
    // an account whose only factors are passkeys, without recovery codes, takes no code at all
    const takesCode = factors.includes('totp') || factors.includes('recovery_code')
    $('mfa-lead').textContent = !takesCode
      ? 'Use a passkey of this account: the browser asks for it.'
      : recovery
        ? 'Enter one of the recovery codes you kept when you added the factor: each works once.'
        : 'Enter the six digits that your authenticator app shows for this account.'
    $('mfa-code-label').textContent = recovery ? 'Recovery code' : 'Code from the authenticator app'
    const code = input('mfa-code')
    code.maxLength = recovery ? 64 : 6
    code.inputMode = recovery ? 'text' : 'numeric'
    code.autocomplete = recovery ? 'off' : 'one-time-code'
    $('mfa-switch').textContent = recovery ? 'Use the authenticator app' : 'Use a recovery code'
    $('mfa-code-field').hidden = !takesCode
    $('mfa-submit').hidden = !takesCode
    $('mfa-switch').hidden = !factors.includes('totp') || !factors.includes('recovery_code')
    $('mfa-use-passkey').hidden = !factors.includes('passkey') || passkeys === null
  }

  /** The account's factors, and the forms that add one or show the recovery codes. */
  let shownFactors: Factor[] | null = null
  let shownQrCode: string | null = null
  let shownCodes: string[] | null = null
  function renderFactors() {
    // the list and the forms are the stored session's: gone with the tokens, whichever tab discarded them
    if (!client.isLoggedIn()) {
      state.factors = null
      state.factorsProblem = null
      state.adding = null
      state.totp = null
      state.recoveryCodes = null
    }
    const { factors, factorsProblem, adding, totp, recoveryCodes } = state
    $('factors-card').hidden = !state.loggedIn
    if (factors !== shownFactors) {
      $('factors').replaceChildren(...(factors ?? []).map(factorItem))
      shownFactors = factors
    }
    const status =
      factorsProblem !== null
        ? `The factors could not be listed: ${factorsProblem}.`
        : factors === null
          ? 'Not listed in this tab yet: press Refresh.'
          : factors.length === 0
            ? 'None: signing in takes one step.'
            : ''
    $('factors-state').textContent = status
    $('factors-state').hidden = status === ''
    $('factor-actions').hidden = adding !== null || totp !== null
    $('add-passkey').hidden = passkeys === null
    // new codes replace the set of a confirmed factor; without one there is none to replace
    $('new-recovery-codes').hidden = factors === null || factors.length === 0

    $('factor-proof-form').hidden = adding === null
    $('factor-proof-lead').textContent = state.proofByCode
      ? `To add ${adding === 'passkey' ? 'a passkey' : 'an authenticator app'}, enter the code just sent to ${state.account?.email ?? 'your address'}.`
      : `To add ${adding === 'passkey' ? 'a passkey' : 'an authenticator app'}, enter your password.`
    $('factor-password-field').hidden = state.proofByCode
    $('factor-code-field').hidden = !state.proofByCode
    $('passkey-name-field').hidden = adding !== 'passkey'
    $('factor-proof-submit').textContent = adding === 'passkey' ? 'Create the passkey' : 'Show the QR code'

    $('totp-form').hidden = totp === null
    if (totp !== null && totp.qrCode !== shownQrCode) {
      const qr = $('totp-qr')
      if (!(qr instanceof HTMLImageElement)) throw new Error('#totp-qr is not an image')
      // an image/svg+xml data URL, which the page's policy allows (img-src data:)
      qr.src = totp.qrCode
      $('totp-secret').textContent = totp.secret.replace(/(.{4})(?=.)/g, '$1 ')
    }
    shownQrCode = totp?.qrCode ?? null

    $('recovery-box').hidden = recoveryCodes === null
    if (recoveryCodes !== shownCodes) {
      $('recovery-codes').replaceChildren(...(recoveryCodes ?? []).map((code) => element('li', '', code)))
      shownCodes = recoveryCodes
    }
  }

  function factorItem(factor: Factor): HTMLLIElement {
    const item = element('li')
    item.dataset.factor = factor.id
    const head = element('div', 'session-head')
    head.append(
      element('span', 'factor-name', factor.name),
      element('span', 'factor-type', factor.type === 'totp' ? 'Authenticator app' : 'Passkey'),
    )
    const facts = element('dl', 'session-facts')
    const rows: [term: string, value: string | HTMLElement][] = [
      ['Added', moment(factor.createdAt)],
      ['Last used', factor.lastUsedAt === null ? 'never' : moment(factor.lastUsedAt)],
    ]
    for (const [term, value] of rows) {
      const row = element('div')
      const detail = element('dd')
      detail.append(value)
      row.append(element('dt', '', term), detail)
      facts.append(row)
    }
    const remove = element('button', 'quiet', 'Remove')
    remove.type = 'button'
    remove.dataset.factor = factor.id
    // "Remove" alone would not say which, read out of its row
    remove.setAttribute('aria-label', `Remove ${factor.name}`)
    remove.disabled = state.busy
    item.append(head, facts, remove)
    return item
  }

  let shownProviders: string[] = []
  function providerButton(provider: string): HTMLButtonElement {
    const button = element('button', '', `Sign in with ${providerName(provider)}`)
    button.type = 'button'
    button.dataset.provider = provider
    button.disabled = state.busy
    return button
  }

  /** The account's profile, its avatar and its providers; its form filled in when the account changed. */
  let shownAccount: Account | null = null
  function renderProfile() {
    const { account } = state
    $('profile-card').hidden = !state.loggedIn
    $('profile-unknown').hidden = account !== null
    $('profile').hidden = account === null
    if (account === shownAccount) return
    shownAccount = account
    if (account === null) return
    showValue('profile-username', account.username)
    showValue('profile-nickname', account.nickname)
    showValue('profile-bio', account.bio)
    $('profile-role').textContent = account.role
    $('profile-password').textContent = account.passwordSet
      ? 'Set'
      : 'None: the account signs in with a provider'
    const avatar = $('avatar')
    if (!(avatar instanceof HTMLImageElement)) throw new Error('#avatar is not an image')
    if (account.avatarUrl === null) avatar.removeAttribute('src')
    else avatar.src = account.avatarUrl
    avatar.hidden = account.avatarUrl === null
    $('avatar-initial').hidden = account.avatarUrl !== null
    $('avatar-initial').textContent = (account.nickname ?? account.username ?? account.email)
      .charAt(0)
      .toUpperCase()
    $('avatar-remove').hidden = account.avatarUrl === null
    $('no-providers').hidden = account.providers.length > 0
    $('linked-providers').replaceChildren(...account.providers.map(linkedProvider))
    input('username').value = account.username ?? ''
    input('nickname').value = account.nickname ?? ''
    textArea('bio').value = account.bio ?? ''
  }

  function linkedProvider(provider: string): HTMLLIElement {
    const item = element('li')
    item.dataset.provider = provider
    const unlink = element('button', 'quiet unlink', 'Unlink')
    unlink.type = 'button'
    unlink.dataset.provider = provider
    // "Unlink" alone would not say which, read out of its row
    unlink.setAttribute('aria-label', `Unlink ${providerName(provider)}`)
    unlink.disabled = state.busy
    item.append(element('span', '', providerName(provider)), unlink)
    return item
  }

  /** The list as last listed; rebuilt only when it changed, so that a keyboard user's focus is kept. */
  let shownSessions: Session[] | null = null
  function renderSessions() {
    // the list is the stored session's: gone with the tokens, whichever tab discarded them
    if (!client.isLoggedIn()) {
      state.sessions = null
      state.sessionsProblem = null
    }
    const { sessions, sessionsProblem } = state
    if (sessions !== shownSessions) {
      $('sessions').replaceChildren(...(sessions ?? []).map(sessionItem))
      shownSessions = sessions
    }
    const others = sessions?.filter(({ current }) => !current).length ?? 0
    const status =
      sessionsProblem !== null
        ? `The sessions could not be listed: ${sessionsProblem}.`
        : sessions === null
          ? 'Not listed in this tab yet: press Refresh.'
          : others === 0
            ? 'No other device is logged in to this account.'
            : ''
    $('sessions-state').textContent = status
    $('sessions-state').hidden = status === ''
    $('sessions-actions').hidden = sessions !== null && others === 0
  }

  function sessionItem(session: Session): HTMLLIElement {
    const item = element('li')
    item.dataset.session = session.id
    const head = element('div', 'session-head')
    const device = element('span', 'device', deviceName(session))
    device.classList.toggle('muted', session.device === '')
    head.append(device)
    if (session.current) {
      item.dataset.current = ''
      head.append(element('span', 'this-device', 'This device'))
    }
    const facts = element('dl', 'session-facts')
    const lastUsed = moment(session.lastUsedAt)
    const rows: [term: string, value: string | HTMLElement][] = [
      ['Network', session.clientAddress ?? 'unknown'],
      ['Logged in', moment(session.createdAt)],
      ['Last used', lastUsed],
    ]
    for (const [term, value] of rows) {
      const row = element('div')
      const detail = element('dd')
      detail.append(value)
      row.append(element('dt', '', term), detail)
      facts.append(row)
    }
    item.append(head, facts)
    if (!session.current) {
      const end = element('button', 'quiet', 'End')
      end.type = 'button'
      end.dataset.session = session.id
      // "End" alone would not say which: a screen reader reads the buttons out of their rows
      end.setAttribute('aria-label', `End session: ${deviceName(session)}, last used ${lastUsed.textContent}`)
      end.disabled = state.busy
      item.append(end)
    }
    return item
  }

  /** The access token's expiry, counted down each second. */
  function renderClock() {
    const claims = decodeClaims(client.getAccessToken())
    if (claims === null) {
      $('access-expiry').textContent = 'none'
      $('access-remaining').textContent = ''
      return
    }
    const left = Math.round(claims.exp - Date.now() / 1000)
    $('access-expiry').textContent = `expires ${timeFormat.format(claims.exp * 1000)}`
    $('access-remaining').textContent =
      left > 0 ? `(in ${duration(left)})` : `(expired ${duration(-left)} ago: the next call refreshes it)`
  }

  function setBusy(busy: boolean) {
    for (const control of document.querySelectorAll<HTMLButtonElement | HTMLInputElement>(
      'main button, main input[type="file"]',
    )) {
      control.disabled = busy
    }
    document.body.setAttribute('aria-busy', String(busy))
  }

  window.setInterval(renderClock, 1000)
  render()
  if (!state.loggedIn) $('email').focus()
  run('Listing the sessions', async () => {
    await listProviders()
    // a tab opened with the tokens of an earlier visit or another tab: its sessions, as after a login
    if (state.loggedIn) await relistSessions()
  })
}

// ---- helpers shared by both states of the page

/** A new element, with a class and text when given. */
function element<Tag extends keyof HTMLElementTagNameMap>(
  tag: Tag,
  className = '',
  text = '',
): HTMLElementTagNameMap[Tag] {
  const created = document.createElement(tag)
  if (className !== '') created.className = className
  if (text !== '') created.textContent = text
  return created
}

/** An instant of the API (ISO 8601), shown in the reader's time zone and kept readable by machines. */
function moment(iso: string): HTMLTimeElement {
  const time = element('time', '', dateFormat.format(new Date(iso)))
  time.dateTime = iso
  return time
}

/** The value of the data attribute `name` of the button that `event` (a click) came from, if any. */
function buttonData(event: Event, name: string): string | undefined {
  const button = event.target instanceof Element ? event.target.closest('button') : null
  return button?.dataset[name]
}

/** How the page names a provider: `google` as `Google`. */
function providerName(provider: string): string {
  return provider.charAt(0).toUpperCase() + provider.slice(1)
}

/** A profile field's value, or a muted “not set”. */
function showValue(id: string, value: string | null) {
  const shown = $(id)
  shown.textContent = value ?? 'not set'
  shown.classList.toggle('muted', value === null)
}

/** An account of the API's own answer (`GET /auth/me`'s data) as the client shows one. */
function accountOf(data: AccountData): Account {
  return {
    id: data.id,
    email: data.email,
    emailVerified: data.email_verified,
    username: data.username,
    nickname: data.nickname,
    // a path on the service's origin: made absolute, as the client makes it
    avatarUrl: data.avatar_url === null ? null : new URL(data.avatar_url, baseUrl).href,
    bio: data.bio,
    role: data.role,
    status: data.status,
    passwordSet: data.password_set,
    providers: data.providers,
    createdAt: data.created_at,
    updatedAt: data.updated_at,
  }
}

/** How the page names a session's device: the service's description, which may be empty. */
function deviceName(session: Session): string {
  return session.device === '' ? 'Unknown device' : session.device
}

function setPill(state: 'in' | 'out', text: string) {
  const pill = $('session-pill')
  pill.dataset.state = state
  pill.textContent = text
}

function notice(kind: NoticeKind, title: string, text: string) {
  const box = $('notice')
  box.dataset.kind = kind
  box.setAttribute('role', kind === 'error' ? 'alert' : 'status')
  $('notice-title').textContent = title
  $('notice-text').textContent = text
  box.hidden = false
}

function clearNotice() {
  $('notice').hidden = true
}

/** A refused field's message under its input; a field the form does not have (the body itself) shows none. */
function showFieldError(name: string | undefined, message: string) {
  if (name === undefined) return
  const fieldInput = document.getElementById(name)
  const text = document.getElementById(`${name}-error`)
  if (!fieldInput || !text) return
  fieldInput.setAttribute('aria-invalid', 'true')
  text.textContent = message.charAt(0).toUpperCase() + message.slice(1)
  text.hidden = false
}

function clearFieldErrors() {
  for (const name of FIELD_INPUTS) {
    $(name).removeAttribute('aria-invalid')
    $(`${name}-error`).hidden = true
  }
}

function showResult(status: number | null, body: unknown) {
  const badge = $('result-status')
  badge.hidden = false
  badge.textContent = status === null ? 'no answer' : String(status)
  badge.dataset.kind = status !== null && status < 400 ? 'ok' : 'error'
  $('result').textContent = typeof body === 'string' ? body : JSON.stringify(body, null, 2)
}

function logRequest(method: string, path: string, status: number | null, ms: number) {
  const item = document.createElement('li')
  if (path === '/auth/refresh') item.dataset.refresh = ''
  const cells: [name: string, text: string][] = [
    ['time', timeFormat.format(Date.now())],
    ['method', method],
    ['path', path],
    ['code', status === null ? 'failed' : String(status)],
    ['ms', `${Math.round(ms)} ms`],
  ]
  for (const [name, text] of cells) {
    const cell = document.createElement('span')
    cell.className = name
    cell.textContent = text
    if (name === 'code' && (status === null || status >= 400)) cell.dataset.kind = 'error'
    item.append(cell)
  }
  const list = $('activity')
  list.prepend(item)
  while (list.children.length > 50) list.lastElementChild?.remove()
  $('activity-empty').hidden = true
}

/** The claims of a JWT, read without checking it (the service checks it): for display only. */
function decodeClaims(token: string | null): Claims | null {
  if (typeof token !== 'string') return null
  const part = token.split('.')[1]?.replace(/-/g, '+').replace(/_/g, '/')
  if (part === undefined) return null
  try {
    const claims: unknown = JSON.parse(atob(part.padEnd(Math.ceil(part.length / 4) * 4, '=')))
    if (typeof claims !== 'object' || claims === null) return null
    const { exp, iat, sub } = claims as Record<string, unknown>
    if (typeof exp !== 'number' || typeof iat !== 'number') return null
    return { exp, iat, sub: typeof sub === 'string' ? sub : undefined }
  } catch {
    return null
  }
}

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`
  const hours = Math.floor(minutes / 60)
  return `${hours} h ${minutes % 60} min`
}
