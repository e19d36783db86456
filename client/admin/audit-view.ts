// The audit trail (docs/api.md §6.3), newest first, page by page, filtered by account, kind and time.

import type { AdminApi, AuditFilters } from './admin-api.js'
import { $, element, fillTable, input, select } from './dom.js'
import { eventRow } from './event-row.js'
import type { Run } from './sign-in.js'

export interface AuditDeps {
  api: AdminApi
  run: Run
  showView(view: 'audit'): void
  /** Opens an account of the trail. */
  openAccount(id: string): Promise<void>
}

export interface AuditView {
  /** The first page of the trail with the filters of the form. */
  show(): Promise<void>
  /** The first page of one account's events (the other filters emptied). */
  showUser(userId: string): Promise<void>
}

/** The value of a `datetime-local` input (the reader's local time) as ISO 8601; undefined when empty. */
function sinceOf(value: string): string | undefined {
  if (value === '') return undefined
  const at = new Date(value)
  return Number.isNaN(at.getTime()) ? value : at.toISOString()
}

export function createAuditView({ api, run, showView, openAccount }: AuditDeps): AuditView {
  let filters: AuditFilters = {}
  let limit = Number(select('audit-limit').value)
  let cursors: (string | null)[] = [null]
  let page = 0
  let next: string | null = null

  async function loadPage() {
    const result = await api.audit(filters, limit, cursors[page] ?? null)
    next = result.next
    const rows = result.items.map((event) => {
      const { user_id: userId } = event
      if (userId === null) return eventRow(event, null)
      const open = element('button', 'link mono open-account', userId)
      open.type = 'button'
      open.setAttribute('aria-label', `Open the account ${userId}`)
      open.addEventListener('click', () => run('Opening the account', () => openAccount(userId)))
      return eventRow(event, open)
    })
    fillTable('audit-table', 'audit-empty', rows)
    $('audit-page').textContent = `Page ${page + 1}`
    ;($('audit-previous') as HTMLButtonElement).disabled = page === 0
    ;($('audit-next') as HTMLButtonElement).disabled = next === null
    const shownFilters = [
      filters.user && `account ${filters.user}`,
      filters.kind && `kind ${filters.kind}`,
      filters.since && `since ${new Date(filters.since).toLocaleString()}`,
    ].filter(Boolean)
    $('audit-filters-shown').replaceChildren(
      shownFilters.length === 0 ? 'Every event, newest first.' : `Newest first; ${shownFilters.join(', ')}.`,
    )
    showView('audit')
  }

  async function show() {
    filters = {
      user: input('audit-user').value.trim() || undefined,
      kind: input('audit-kind').value.trim() || undefined,
      since: sinceOf(input('audit-since').value),
    }
    limit = Number(select('audit-limit').value)
    cursors = [null]
    page = 0
    await loadPage()
  }

  $('audit-form').addEventListener('submit', (event) => {
    event.preventDefault()
    run('Reading the audit trail', show)
  })
  $('audit-clear').addEventListener('click', () => {
    input('audit-user').value = ''
    input('audit-kind').value = ''
    input('audit-since').value = ''
    run('Reading the audit trail', show)
  })
  $('audit-next').addEventListener('click', () =>
    run('Turning the page', async () => {
      if (next === null) return
      cursors[page + 1] = next
      page++
      await loadPage()
    }),
  )
  $('audit-previous').addEventListener('click', () =>
    run('Turning the page', async () => {
      if (page === 0) return
      page--
      await loadPage()
    }),
  )

  return {
    show,
    async showUser(userId) {
      input('audit-user').value = userId
      input('audit-kind').value = ''
      input('audit-since').value = ''
      await show()
    },
  }
}
