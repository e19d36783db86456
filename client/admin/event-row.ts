// One audit event as a row of a table, in the account's view and in the audit trail's.

import type { AuditEvent } from './admin-api.js'
import { mono, row, time } from './dom.js'

/**
 * An audit event as one row of a table: when, what, of which account (a column left out when `account` is
 * undefined: the table of one account's events), why, from where, and by which admin.
 */
export function eventRow(event: AuditEvent, account?: Node | string | null): HTMLTableRowElement {
  return row([
    time(event.at),
    mono(event.kind),
    ...(account === undefined ? [] : [account]),
    event.reason,
    mono(event.ip),
    mono(event.actor),
  ])
}
