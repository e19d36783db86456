import type { StorageCall } from '../storage-call.js'
import type { ProviderLinkStore } from '../stores.js'
import { refusedForMissingAccount } from './missing-account.js'
import { toProviderLink } from './oauth-rows.js'
import type { SqlDatabase } from './sql-database.js'
import type { SqlQuery } from './sql-statements.js'

/**
 * ProviderLinkStore in the `oauth_accounts` table of any SQL engine (migration 0006), with that engine's statements.
 * The primary key (provider, subject) and the unique key (user_id, provider) are the two rules of a link; a write
 * that would break one fails, and is reported, without anything read first.
 */
export function createSqlProviderLinkStore(database: SqlDatabase, call: StorageCall): ProviderLinkStore {
  const { statements } = database
  const read = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, () => database.run(sql, parameters))).rows
  const write = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, (attempt) => database.write(sql, parameters, attempt))).changes

  return {
    async find(provider, subject) {
      const [row] = await read('providerLinks.find', statements.findProviderLink(provider, subject))
      return row === undefined ? null : toProviderLink(row)
    },
    async link(link) {
      const { sql, parameters } = statements.insertProviderLink(link)
      try {
        const taken = await call('providerLinks.link', (attempt) =>
          database.write(sql, parameters, attempt).then(
            () => false,
            (error: unknown) => {
              if (database.isUniqueViolation(error)) return true
              throw error
            },
          ),
        )
        return taken ? 'taken' : 'linked'
      } catch (error) {
        // the foreign key refuses the link of an account deleted since the caller read it
        if (await refusedForMissingAccount(database, call, error, link.userId)) return 'missing'
        throw error
      }
    },
    // One conditional DELETE decides, so that no read of the account's other ways in can go stale before it; only
    // when it deleted nothing, a read tells why.
    async unlink(userId, provider) {
      if ((await write('providerLinks.unlink', statements.unlinkProvider(userId, provider))) === 1)
        return 'unlinked'
      const linked = await read('providerLinks.unlink', statements.findProviderLinkOf(userId, provider))
      return linked.length === 0 ? 'not_linked' : 'only_way_in'
    },
    unlinkAll: (userId) => write('providerLinks.unlinkAll', statements.deleteProviderLinks(userId)),
    async list(userId) {
      return (await read('providerLinks.list', statements.listProviderLinks(userId))).map(toProviderLink)
    },
  }
}
