import type {
  AuditPageQuery,
  AuditPosition,
  AuditStore,
  StoredAuditEvent,
  UserStore,
} from '../storage/stores.js'

/** A page of the audit trail, newest first, and where the next one starts (null when none follows). */
export interface AuditPage {
  events: StoredAuditEvent[]
  /** An opaque cursor (AuditReader.cursor parses it back); null when this page holds the last matching event. */
  next: string | null
}

/** Whose events: an account by id or e-mail; a deleted one by its id only. */
export type AuditSubject = { id: string } | { email: string }

/**
 * Reading the audit trail (docs/api.md §6.3): what `tessera audit` prints and GET /admin/audit serves, through the same
 * code. Methods throw StorageError when the store fails.
 */
export interface AuditReader {
  /**
   * The events that match `query`, newest first, at most `limit` of them: a keyset page (AuditStore.page), with the
   * cursor of the next one.
   */
  page(query: AuditPageQuery): Promise<AuditPage>
  /**
   * The user id whose events `subject` names: an account's, or the id of a deleted one that still has events. Null
   * when no account and no event has it.
   */
  subject(subject: AuditSubject): Promise<string | null>
  /** The position a cursor of AuditPage.next stands for; null for a text that is no such cursor. */
  cursor(text: string): AuditPosition | null
}

export interface AuditReaderDeps {
  audit: Pick<AuditStore, 'page'>
  users: Pick<UserStore, 'findById' | 'findByEmail'>
}

/** A cursor: the time (epoch ms) and the row id of the last event of a page, as `<at>.<id>`. */
const CURSOR = /^(\d{1,16})\.(\d{1,16})$/

export function createAuditReader(deps: AuditReaderDeps): AuditReader {
  const { audit, users } = deps
  const page = async (query: AuditPageQuery): Promise<AuditPage> => {
    // one more than asked tells whether another page follows
    const found = await audit.page({ ...query, limit: query.limit + 1 })
    const events = found.slice(0, query.limit)
    const last = events.at(-1)
    return {
      events,
      next: found.length > query.limit && last !== undefined ? `${last.at}.${last.id}` : null,
    }
  }
  return {
    page,

    async subject(subject) {
      if ('email' in subject) return (await users.findByEmail(subject.email))?.id ?? null
      if ((await users.findById(subject.id)) !== null) return subject.id
      // a deleted account has no row any more, but its id still finds its events
      const { events } = await page({ userId: subject.id, limit: 1 })
      return events.length > 0 ? subject.id : null
    },

    cursor(text) {
      const match = CURSOR.exec(text)
      if (match === null) return null
      const at = Number(match[1])
      const id = Number(match[2])
      return Number.isSafeInteger(at) && Number.isSafeInteger(id) ? { at, id } : null
    },
  }
}
