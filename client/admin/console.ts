// The script of the admin console (GET /admin, docs/api.md §4.28). The client's build type-checks it
// (admin/tsconfig.json) and writes each module of admin/ to dist/admin/ (scripts/build-admin.mjs); the service serves
// them under /admin/assets/, beside the built library as /admin/assets/client.js, which this module imports when it
// starts. test/admin/console.browser.test.ts runs it in Chromium.

import { createAccountsView } from './accounts-view.js'
import { createAdminApi } from './admin-api.js'
import { createAuditView } from './audit-view.js'
import type { Account } from './client.js'
import { $ } from './dom.js'
import { clearNotice, explain, notice } from './notice.js'
import { createSignIn } from './sign-in.js'

/** The library as the page loads it: `/admin/assets/client.js`, the built dist/index.js. */
type Library = typeof import('./client.js')
type View = 'accounts' | 'account' | 'audit'

/** The service this page was served by, path prefix included (the page is its `admin`). */
const baseUrl = new URL('.', window.location.href).href.replace(/\/$/, '')

start()

async function start() {
  let library: Library
  try {
    library = await import('./client.js')
  } catch {
    await showClientMissing()
    return
  }
  createConsole(library)
}

/** The built client could not be loaded: say why, with the service's own message when it gave one. */
async function showClientMissing() {
  let message = 'The client library could not be loaded from /admin/assets/client.js.'
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
  $('who').textContent = 'Client not loaded'
  setBusy(false)
}

function setBusy(busy: boolean) {
  document.body.setAttribute('aria-busy', String(busy))
}

function createConsole({ createTesseraClient, TesseraError }: Library) {
  // the tab's own session: closing the tab forgets it, and the application's pages on this origin never share it
  const client = createTesseraClient({
    baseUrl,
    storage: window.sessionStorage,
    storageKey: 'tessera.admin.tokens',
    onSessionEnd: () => showSignedOut(),
  })
  const api = createAdminApi(client, TesseraError)
  /** The admin signed in, as the service last described the account; null before. */
  let admin: Account | null = null
  let busy = false

  /** One act of the admin's at a time; a failure explained, and a refused admin signed out. */
  async function run(label: string, action: () => Promise<void>) {
    if (busy) return
    busy = true
    setBusy(true)
    clearNotice()
    // whether the act was made in a session: its 401 then ends the session, rather than refusing a sign-in
    const hadSession = client.isLoggedIn()
    try {
      await action()
    } catch (error) {
      if (!(error instanceof TesseraError)) throw error
      const signedIn = hadSession || admin !== null
      const [title, text] = explain(label, error, signedIn)
      // the session ended, or the account may not use the console (not an admin, or no second factor): the
      // console's own session is of no use any more
      if (signedIn && (error.status === 401 || error.status === 403)) {
        await client.logout()
        showSignedOut()
      }
      notice('error', title, text)
    } finally {
      busy = false
      setBusy(false)
    }
  }

  function showView(view: View) {
    $('accounts').hidden = view !== 'accounts'
    $('account').hidden = view !== 'account'
    $('audit').hidden = view !== 'audit'
    const current = view === 'audit' ? 'show-audit' : 'show-accounts'
    for (const id of ['show-accounts', 'show-audit']) {
      if (id === current) $(id).setAttribute('aria-current', 'page')
      else $(id).removeAttribute('aria-current')
    }
  }

  const accounts = createAccountsView({
    api,
    run,
    showView,
    showEvents: (userId) => run('Reading the audit trail', () => audit.showUser(userId)),
    self: () => admin?.id ?? null,
  })
  const audit = createAuditView({ api, run, showView, openAccount: accounts.open })
  const signIn = createSignIn({
    client,
    run,
    async signedIn(account) {
      admin = account
      showSignedIn()
      // the first page of accounts is also what tells whether the account may use the console at all
      await accounts.search()
    },
  })

  function showSignedIn() {
    $('sign-in').hidden = true
    $('console').hidden = false
    $('who').textContent = admin === null ? '' : `Signed in as ${admin.email}`
    $('sign-out').hidden = false
  }

  function showSignedOut() {
    admin = null
    $('console').hidden = true
    $('sign-in').hidden = false
    $('who').textContent = 'Signed out'
    $('sign-out').hidden = true
    signIn.show()
  }

  $('show-accounts').addEventListener('click', () => run('Listing the accounts', accounts.search))
  $('show-audit').addEventListener('click', () => run('Reading the audit trail', audit.show))
  $('sign-out').addEventListener('click', () =>
    run('Signing out', async () => {
      await client.logout()
      showSignedOut()
      notice('info', 'Signed out', 'The console’s session has ended.')
    }),
  )

  if (client.isLoggedIn()) {
    // a reload of this tab: its session goes on
    run('Opening the console', async () => {
      admin = await client.me()
      showSignedIn()
      await accounts.search()
    })
  } else {
    showSignedOut()
    setBusy(false)
  }
}
