// The few DOM helpers the console's modules share. Every text the service sends (an address, a username, a device) is
// put in with textContent, never as HTML.

/** An element of the page, which has it: a missing one is a mistake of a script or of index.html. */
export function $(id: string): HTMLElement {
  const element = document.getElementById(id)
  if (element === null) throw new Error(`The page has no #${id}`)
  return element
}

/** An input of the page. */
export function input(id: string): HTMLInputElement {
  const element = $(id)
  if (!(element instanceof HTMLInputElement)) throw new Error(`#${id} is not an input`)
  return element
}

/** A select of the page. */
export function select(id: string): HTMLSelectElement {
  const element = $(id)
  if (!(element instanceof HTMLSelectElement)) throw new Error(`#${id} is not a select`)
  return element
}

type Child = Node | string | null

/** A new element with its class (when given) and children; strings become text. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag)
  if (className) made.className = className
  for (const child of children) if (child !== null) made.append(child)
  return made
}

/** A table row of cells, each a text or a node; `null` is shown as a dash. */
export function row(cells: readonly Child[]): HTMLTableRowElement {
  return element('tr', null, ...cells.map((cell) => element('td', null, cell ?? '—')))
}

/** Replaces the body of a table (its one tbody) with `rows`; the table shows only when it has any. */
export function fillTable(tableId: string, emptyId: string, rows: readonly HTMLTableRowElement[]): void {
  const table = $(tableId)
  const body = table.querySelector('tbody')
  if (body === null) throw new Error(`#${tableId} has no tbody`)
  body.replaceChildren(...rows)
  table.hidden = rows.length === 0
  $(emptyId).hidden = rows.length > 0
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })

/**
 * A time of the API (ISO 8601, or epoch milliseconds) as a `<time>`, in the reader's zone, its exact value in
 * `datetime` and the title.
 */
export function time(value: string | number | null | undefined): HTMLTimeElement | string {
  if (value === null || value === undefined) return '—'
  const at = new Date(value)
  if (Number.isNaN(at.getTime())) return String(value)
  const shown = element('time', null, dateTime.format(at))
  shown.dateTime = at.toISOString()
  shown.title = at.toISOString()
  return shown
}

/** A value in a monospaced font (ids, addresses). */
export const mono = (text: string | null | undefined): HTMLElement | string =>
  text === null || text === undefined || text === '' ? '—' : element('span', 'mono', text)

/** "1 session", "3 sessions". */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`
