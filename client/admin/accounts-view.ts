// The accounts: a search by the prefix of an address or a username, page by page, and one account with its sessions,
// factors and recent events, and the acts on it (docs/api.md §4.27). Every destructive act is confirmed first.

import type { AccountDetail, AdminApi, AdminUser } from './admin-api.js'
import { confirmAct } from './confirm.js'
import { $, count, element, fillTable, input, mono, row, select, time } from './dom.js'
import { eventRow } from './event-row.js'
import { notice } from './notice.js'
import type { Run } from './sign-in.js'

export interface AccountsDeps {
  api: AdminApi
  run: Run
  /** Shows one of the console's views. */
  showView(view: 'accounts' | 'account'): void
  /** Shows the audit trail of one account. */
  showEvents(userId: string): void
  /** The id of the admin signed in: their own account is marked, and the API refuses acts on it. */
  self(): string | null
}

export interface AccountsView {
  /** The first page of the current search (all accounts at first). */
  search(): Promise<void>
  /** One account, by id. */
  open(id: string): Promise<void>
}

export function createAccountsView({ api, run, showView, showEvents, self }: AccountsDeps): AccountsView {
  let query = ''
  let limit = Number(select('search-limit').value)
  /** The cursor of each page seen so far (the first page has none): what goes back a page. */
  let cursors: (string | null)[] = [null]
  let page = 0
  let next: string | null = null
  /** The account shown, as the service last described it. */
  let shown: AccountDetail | null = null

  const you = (user: AdminUser) => (user.id === self() ? ' (you)' : '')

  async function loadPage() {
    const result = await api.users(query, limit, cursors[page] ?? null)
    next = result.next
    const rows = result.items.map((user) => {
      const open = element('button', 'link open-account', user.email)
      open.type = 'button'
      open.addEventListener('click', () => run('Opening the account', () => openAccount(user.id)))
      return row([
        element('span', null, open, you(user)),
        user.username,
        user.role,
        element('span', `status status-${user.status}`, user.status),
        time(user.created_at),
      ])
    })
    fillTable('users-table', 'users-empty', rows)
    $('users-empty').textContent =
      query === '' ? 'There is no account yet.' : `No account's address or username starts with “${query}”.`
    $('users-page').textContent = `Page ${page + 1}`
    ;($('users-previous') as HTMLButtonElement).disabled = page === 0
    ;($('users-next') as HTMLButtonElement).disabled = next === null
    showView('accounts')
  }

  async function search() {
    query = input('search-query').value.trim()
    limit = Number(select('search-limit').value)
    cursors = [null]
    page = 0
    await loadPage()
  }

  $('search-form').addEventListener('submit', (event) => {
    event.preventDefault()
    run('Searching', search)
  })
  $('users-next').addEventListener('click', () =>
    run('Turning the page', async () => {
      if (next === null) return
      cursors[page + 1] = next
      page++
      await loadPage()
    }),
  )
  $('users-previous').addEventListener('click', () =>
    run('Turning the page', async () => {
      if (page === 0) return
      page--
      await loadPage()
    }),
  )
  $('back-to-accounts').addEventListener('click', () => run('Listing the accounts', loadPage))

  async function openAccount(id: string) {
    shown = await api.account(id)
    renderAccount(shown)
    showView('account')
    $('account-title').focus()
  }

  function renderAccount({ user, sessions, factors, events }: AccountDetail) {
    $('account-title').textContent = `${user.email}${you(user)}`
    const facts: [string, Node | string | null][] = [
      ['User id', mono(user.id)],
      ['E-mail', user.email],
      ['Verified', user.email_verified ? 'Yes' : 'No'],
      ['Username', user.username],
      ['Nickname', user.nickname],
      ['Role', mono(user.role)],
      ['Status', element('span', `status status-${user.status}`, user.status)],
      ['Password', user.password_set ? 'Set' : 'None (signs in with a provider or a code)'],
      ['Providers', user.providers.length === 0 ? 'None' : user.providers.join(', ')],
      ['Registered', time(user.created_at)],
      ['Last changed', time(user.updated_at)],
    ]
    $('account-facts').replaceChildren(
      ...facts.flatMap(([term, value]) => [element('dt', null, term), element('dd', null, value ?? '—')]),
    )
    $('account-disable').hidden = user.status !== 'active'
    $('account-enable').hidden = user.status === 'active'
    $('account-revoke').hidden = sessions.length === 0
    $('account-mfa-reset').hidden = factors.length === 0
    input('role-input').value = user.role

    fillTable(
      'sessions-table',
      'sessions-empty',
      sessions.map((session) =>
        row([
          session.device || 'Unknown device',
          mono(session.client_address),
          time(session.created_at),
          time(session.last_used_at),
          session.second_factor ? 'Yes' : 'No',
        ]),
      ),
    )
    fillTable(
      'factors-table',
      'factors-empty',
      factors.map((factor) =>
        row([
          factor.type === 'totp' ? 'Authenticator app' : factor.type,
          factor.name,
          time(factor.created_at),
        ]),
      ),
    )
    fillTable(
      'events-table',
      'events-empty',
      events.map((event) => eventRow(event)),
    )
  }

  /** An act on the account shown, once confirmed when `confirmation` is given; the account is shown again after. */
  function act(
    label: string,
    confirmation: ((detail: AccountDetail) => Parameters<typeof confirmAct>[0]) | null,
    perform: (user: AdminUser) => Promise<[title: string, text: string]>,
  ) {
    return () => {
      const detail = shown
      if (detail === null) return
      run(label, async () => {
        if (confirmation !== null && !(await confirmAct(confirmation(detail)))) return
        const [title, text] = await perform(detail.user)
        await openAccount(detail.user.id)
        notice('ok', title, text)
      })
    }
  }

  const ended = (n: number) => `${count(n, 'session')} ended.`

  $('account-disable').addEventListener(
    'click',
    act(
      'Disabling the account',
      ({ user, sessions }) => ({
        title: `Disable ${user.email}?`,
        text:
          'It cannot sign in or refresh its tokens until an admin enables it again' +
          (sessions.length === 0
            ? '.'
            : sessions.length === 1
              ? ', and its session ends now.'
              : `, and its ${sessions.length} sessions end now.`),
        action: 'Disable',
      }),
      async (user) => {
        const result = await api.update(user.id, { status: 'disabled' })
        return ['Account disabled', `${user.email} is disabled; ${ended(result.sessions_ended)}`]
      },
    ),
  )
  $('account-enable').addEventListener(
    'click',
    act('Enabling the account', null, async (user) => {
      await api.update(user.id, { status: 'active' })
      return ['Account enabled', `${user.email} can sign in again.`]
    }),
  )
  $('account-revoke').addEventListener(
    'click',
    act(
      'Ending the sessions',
      ({ user, sessions }) => ({
        title: `End every session of ${user.email}?`,
        text:
          (sessions.length === 1
            ? 'The device of its session must sign in again'
            : `The devices of its ${sessions.length} sessions must sign in again`) +
          ': their refresh tokens are refused from now on (an access token already issued reads until it expires).',
        action: 'End the sessions',
      }),
      async (user) => {
        const result = await api.revoke(user.id)
        return ['Sessions ended', ended(result.sessions_ended)]
      },
    ),
  )
  $('account-mfa-reset').addEventListener(
    'click',
    act(
      'Resetting the second factor',
      ({ user, factors }) => ({
        title: `Reset the second factor of ${user.email}?`,
        text:
          `${factors.length === 1 ? 'Its factor' : `Its ${factors.length} factors`} and its recovery codes are ` +
          'removed: it signs in with its first ' +
          'factor alone until it adds one again, and its sessions end. Do this only for a holder whose identity ' +
          'you have checked otherwise.',
        action: 'Reset the second factor',
      }),
      async (user) => {
        const result = await api.resetSecondFactor(user.id)
        return [
          'Second factor reset',
          `${count(result.factors_removed, 'factor')} removed; ${ended(result.sessions_ended)}`,
        ]
      },
    ),
  )
  $('account-delete').addEventListener('click', () => {
    const detail = shown
    if (detail === null) return
    const { user } = detail
    run('Deleting the account', async () => {
      const confirmed = await confirmAct({
        title: `Delete ${user.email}?`,
        text:
          'The account, its sessions and its factors are gone for good, and its address is free for a new ' +
          'account. Its audit events stay until they are pruned. This cannot be undone.',
        action: 'Delete the account',
        typed: user.email,
      })
      if (!confirmed) return
      await api.remove(user.id)
      shown = null
      await loadPage()
      notice('ok', 'Account deleted', `${user.email} is deleted.`)
    })
  })
  $('role-form').addEventListener('submit', (event) => {
    event.preventDefault()
    const role = input('role-input').value.trim()
    const detail = shown
    if (detail === null) return
    if (role === detail.user.role) {
      notice('info', 'Nothing to change', `${detail.user.email} has the role ${role} already.`)
      return
    }
    act(
      'Changing the role',
      ({ user }) => ({
        title: `Change the role of ${user.email}?`,
        text:
          `From ${user.role} to ${role}. Its tokens carry its role: its sessions end, and it signs in again ` +
          'with the new one.',
        action: 'Change the role',
      }),
      async (user) => {
        const result = await api.update(user.id, { role })
        return [
          'Role changed',
          `${user.email} now has the role ${result.user.role}; ${ended(result.sessions_ended)}`,
        ]
      },
    )()
  })
  $('account-all-events').addEventListener('click', () => {
    if (shown !== null) showEvents(shown.user.id)
  })

  return { search, open: (id) => openAccount(id) }
}
