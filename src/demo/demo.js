// @ts-nocheck: a browser script, served as it is; the service's type check has no DOM library. The browser test
// (test/demo/demo.browser.test.ts) runs it in Chromium.

/** The service this page was served by, path prefix included (the page is its `demo`). */
const baseUrl = new URL('.', window.location.href).href.replace(/\/$/, '')
const $ = (id) => document.getElementById(id)
const timeFormat = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
})
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
/** The calls that change the stored pair. */
const CHANGING_PATHS = ['/auth/login', '/auth/register', '/auth/refresh', '/auth/delete-refresh-token']

start()

async function start() {
  let library
  try {
    library = await import('./client.js')
  } catch {
    await showClientMissing()
    return
  }
  createPage(library)
}

/** The built client could not be loaded: say why, with the service's own message when it gave one. */
async function showClientMissing() {
  let message = 'The client library could not be loaded from /demo/client.js.'
  try {
    const answer = await window.fetch(new URL('./client.js', import.meta.url))
    const body = await answer.json()
    if (typeof body?.message === 'string') message = body.message
  } catch {}
  const banner = $('client-missing')
  banner.textContent = message
  banner.hidden = false
  for (const card of document.querySelectorAll('.card')) card.hidden = true
  setPill('out', 'Client not loaded')
}

function createPage({ createTesseraClient, TesseraError }) {
  const client = createTesseraClient({
    baseUrl,
    storage: window.localStorage,
    fetch: recordingFetch,
    onSessionEnd: (reason) => {
      state.loggedIn = false
      state.account = null
      if (reason === 'refresh_refused') {
        notice('info', 'Your session has ended', 'The service refused to refresh the tokens: log in again.')
      } else if (reason === 'ended_elsewhere') {
        notice('info', 'Your session has ended', 'You logged out in another tab: log in again.')
      }
      render()
    },
  })
  const state = {
    mode: 'login',
    /** What this tab shows: the client's state as of its last call. */
    loggedIn: client.isLoggedIn(),
    /** The account as the service last described it: { id?, email, createdAt }. */
    account: null,
    /** The access token stored when this tab last looked, to tell when the pair changes and why. */
    access: client.getAccessToken(),
    changedAt: null,
    changedWhy: '',
    /** Whether this tab has had an answer to a call that changes the pair since the last change it saw. */
    ownChange: false,
    /** How many requests this tab has sent: whether a failed action reached the service at all. */
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
  async function recordingFetch(request) {
    const path = new URL(request.url).pathname
    state.sent++
    const started = performance.now()
    try {
      const response = await window.fetch(request)
      if (CHANGING_PATHS.includes(path) && (response.ok || path === '/auth/delete-refresh-token')) {
        state.ownChange = true
      }
      logRequest(request.method, path, response.status, performance.now() - started)
      return response
    } catch (error) {
      logRequest(request.method, path, null, performance.now() - started)
      throw error
    }
  }

  function tokensChanged(fromStorageEvent) {
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

  async function run(label, action) {
    if (state.busy) return
    state.busy = true
    setBusy(true)
    clearNotice()
    const sent = state.sent
    try {
      await action()
    } catch (error) {
      failed(label, error, state.sent > sent)
    } finally {
      state.busy = false
      setBusy(false)
      render()
    }
  }

  function failed(label, error, reachedService) {
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
    for (const { field, message } of error.errors) showFieldError(field, message)
    if (state.loggedIn && !client.isLoggedIn()) {
      // the tokens are gone (another tab logged out) though this tab's client never held them: the same end
      state.loggedIn = false
      state.account = null
      notice('info', 'Your session has ended', 'This browser has no tokens any more: log in again.')
    } else if (state.loggedIn || $('notice').hidden) {
      // a session that ended during the call has said so already (onSessionEnd)
      notice('error', `${label} failed`, error.message)
    }
  }

  $('auth-form').addEventListener('submit', (event) => {
    event.preventDefault()
    const email = $('email').value
    const password = $('password').value
    const registering = state.mode === 'register'
    clearFieldErrors()
    run(registering ? 'Registration' : 'Login', async () => {
      const account = registering
        ? await client.register({ email, password })
        : await client.login({ email, password })
      state.account = account
      state.loggedIn = true
      $('password').value = ''
      showResult(200, account)
      notice('ok', registering ? 'Account created' : 'Logged in', `Welcome, ${account.email}.`)
    })
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
      const body = await response.json().catch(() => null)
      showResult(response.status, body)
      if (response.ok) {
        const { id, email, created_at } = body.data
        state.account = { id, email, createdAt: created_at }
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
      showResult(200, { code: 200, message: 'Success', data: null })
      notice(
        'ok',
        'Logged out',
        'The tokens are gone from this browser, and the refresh token from the service.',
      )
    }),
  )

  for (const mode of ['login', 'register']) {
    $(`mode-${mode}`).addEventListener('click', () => {
      state.mode = mode
      clearFieldErrors()
      clearNotice()
      render()
      $('email').focus()
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

    const registering = state.mode === 'register'
    $('mode-login').setAttribute('aria-selected', String(!registering))
    $('mode-register').setAttribute('aria-selected', String(registering))
    $('submit').textContent = registering ? 'Create account' : 'Log in'
    $('password').autocomplete = registering ? 'new-password' : 'current-password'
    $('password-hint').hidden = !registering

    const claims = decodeClaims(client.getAccessToken())
    $('account-email').textContent = email ?? 'press “Who am I?” to ask the service'
    $('account-email').classList.toggle('muted', !email)
    $('account-id').textContent = account?.id ?? claims?.sub ?? '—'
    $('account-created').textContent = account?.createdAt
      ? dateFormat.format(new Date(account.createdAt))
      : '—'

    const stored = client.isLoggedIn()
    const tokenState = $('token-state')
    tokenState.dataset.state = stored ? 'in' : 'out'
    tokenState.textContent = stored ? 'Logged in' : 'Logged out'
    $('token-state-note').textContent =
      loggedIn && !stored ? 'by another tab: this tab finds out on its next call' : ''
    $('access-issued').textContent = claims ? timeFormat.format(claims.iat * 1000) : '—'
    $('tokens-changed').textContent = state.changedAt ? timeFormat.format(state.changedAt) : '—'
    $('tokens-changed-why').textContent = state.changedAt ? `(${state.changedWhy})` : ''
    renderClock()
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

  function setBusy(busy) {
    for (const button of document.querySelectorAll('main button')) button.disabled = busy
    document.body.setAttribute('aria-busy', String(busy))
  }

  window.setInterval(renderClock, 1000)
  render()
  if (!state.loggedIn) $('email').focus()
}

// ---- helpers shared by both states of the page

function setPill(state, text) {
  const pill = $('session-pill')
  pill.dataset.state = state
  pill.textContent = text
}

function notice(kind, title, text) {
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

function showFieldError(field, message) {
  const name = field.replace(/^\//, '')
  const input = $(name)
  const text = $(`${name}-error`)
  if (!input || !text) return
  input.setAttribute('aria-invalid', 'true')
  text.textContent = message.charAt(0).toUpperCase() + message.slice(1)
  text.hidden = false
}

function clearFieldErrors() {
  for (const name of ['email', 'password']) {
    $(name).removeAttribute('aria-invalid')
    $(`${name}-error`).hidden = true
  }
}

function showResult(status, body) {
  const badge = $('result-status')
  badge.hidden = false
  badge.textContent = status === null ? 'no answer' : String(status)
  badge.dataset.kind = status !== null && status < 400 ? 'ok' : 'error'
  $('result').textContent = typeof body === 'string' ? body : JSON.stringify(body, null, 2)
}

function logRequest(method, path, status, ms) {
  const item = document.createElement('li')
  if (path === '/auth/refresh') item.dataset.refresh = ''
  const cells = [
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
  while (list.children.length > 50) list.lastElementChild.remove()
  $('activity-empty').hidden = true
}

/** The claims of a JWT, read without checking it (the service checks it): for display only. */
function decodeClaims(token) {
  if (typeof token !== 'string') return null
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')
    const claims = JSON.parse(atob(part.padEnd(Math.ceil(part.length / 4) * 4, '=')))
    return typeof claims.exp === 'number' && typeof claims.iat === 'number' ? claims : null
  } catch {
    return null
  }
}

function duration(seconds) {
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`
  const hours = Math.floor(minutes / 60)
  return `${hours} h ${minutes % 60} min`
}
