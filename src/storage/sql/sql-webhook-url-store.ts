import type { StorageCall } from '../storage-call.js'
import type { WebhookUrlStore } from '../stores.js'
import type { SqlDatabase } from './sql-database.js'

/** WebhookUrlStore in the `webhook_disabled_urls` table of any SQL engine (migration 0012). */
export function createSqlWebhookUrlStore(database: SqlDatabase, call: StorageCall): WebhookUrlStore {
  const { statements } = database
  return {
    async disable(urlDigest, at) {
      const { sql, parameters } = statements.disableWebhookUrl(urlDigest, at)
      return call('webhookUrls.disable', (attempt) =>
        database.write(sql, parameters, attempt).then(
          () => true,
          (error: unknown) => {
            // disabled already (by another instance, or a second 410): the first time stands
            if (database.isUniqueViolation(error)) return false
            throw error
          },
        ),
      )
    },
    async enable(urlDigest) {
      const { sql, parameters } = statements.enableWebhookUrl(urlDigest)
      const { changes } = await call('webhookUrls.enable', (attempt) =>
        database.write(sql, parameters, attempt),
      )
      return changes > 0
    },
    async disabled() {
      const { sql, parameters } = statements.disabledWebhookUrls()
      const { rows } = await call('webhookUrls.disabled', () => database.run(sql, parameters))
      return rows.map((row) => ({ urlDigest: String(row.url_digest), disabledAt: Number(row.disabled_at) }))
    },
  }
}
