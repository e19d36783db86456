import { StorageError } from '../../errors.js'
import type { StorageCall } from '../storage-call.js'
import type { ServiceKeyStore } from '../stores.js'
import type { SqlDatabase } from './sql-database.js'

/**
 * ServiceKeyStore in the `service_keys` table of any SQL engine (migration 0009), with that engine's statements. The
 * primary key decides between processes that store a key at once: the first insertion commits, the others change
 * nothing, and each then reads what is stored.
 */
export function createSqlServiceKeyStore(database: SqlDatabase, call: StorageCall): ServiceKeyStore {
  const { statements } = database
  const find = async (operation: string, name: string) => {
    const { sql, parameters } = statements.findServiceKey(name)
    const [row] = (await call(operation, () => database.run(sql, parameters))).rows
    return row === undefined ? null : String(row.value)
  }

  return {
    get: (name) => find('serviceKeys.get', name),
    async putIfAbsent(name, value) {
      const { sql, parameters } = statements.insertServiceKeyIfAbsent(name, value)
      await call('serviceKeys.putIfAbsent', (attempt) => database.write(sql, parameters, attempt))
      // committed, this one or another's: the read sees it (a key is never removed)
      const stored = await find('serviceKeys.putIfAbsent', name)
      if (stored === null) {
        throw new StorageError('serviceKeys.putIfAbsent failed', {
          cause: new Error('no key after its insertion'),
        })
      }
      return stored
    },
    async replace(name, expected, value) {
      const { sql, parameters } = statements.replaceServiceKey(name, expected, value)
      return (
        (await call('serviceKeys.replace', (attempt) => database.write(sql, parameters, attempt))).changes ===
        1
      )
    },
  }
}
