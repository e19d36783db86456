import type { StorageCall } from '../storage-call.js'
import type { FactorStore } from '../stores.js'
import { credentialDigest, toFactor } from './factor-rows.js'
import { refusedForMissingAccount } from './missing-account.js'
import type { SqlDatabase, SqlResult } from './sql-database.js'
import type { SqlQuery } from './sql-statements.js'

/** Pending factors one pruning statement deletes at most: each is a short write, however many there are. */
const PRUNE_BATCH = 1_000

/**
 * FactorStore in the `mfa_factors` and `mfa_recovery_codes` tables of any SQL engine (migration 0009), with that
 * engine's statements. Each one-time rule is one conditional statement whose row lock (SQLite: the one writer)
 * decides between concurrent calls: a TOTP step accepted once, a recovery code used once, a passkey's counter swapped
 * once. What changes both tables runs in one transaction that first locks the account's row (lockAccount), so that
 * the account's removals and replacements of codes run one after another, each reading what the one before left.
 */
export function createSqlFactorStore(database: SqlDatabase, call: StorageCall): FactorStore {
  const { statements } = database
  const read = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, () => database.run(sql, parameters))).rows
  const write = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, (attempt) => database.write(sql, parameters, attempt))).changes
  /** `queries` in one transaction, after the account's lock; resolves with their results (not the lock's). */
  const writeForAccount = async (
    operation: string,
    userId: string,
    queries: readonly SqlQuery[],
  ): Promise<SqlResult[]> => {
    const lock = statements.lockAccount(userId)
    const results = await call(operation, (attempt) =>
      database.writeAll(lock === null ? queries : [lock, ...queries], attempt),
    )
    return lock === null ? results : results.slice(1)
  }

  return {
    async add(factor) {
      const { sql, parameters } = statements.insertFactor(factor)
      try {
        const taken = await call('factors.add', (attempt) =>
          database.write(sql, parameters, attempt).then(
            () => false,
            (error: unknown) => {
              if (database.isUniqueViolation(error)) return true
              throw error
            },
          ),
        )
        return taken ? 'taken' : 'added'
      } catch (error) {
        // the foreign key refuses the factor of an account deleted since the caller read it
        if (await refusedForMissingAccount(database, call, error, factor.userId)) return 'missing'
        throw error
      }
    },
    async list(userId) {
      return (await read('factors.list', statements.listFactors(userId))).map(toFactor)
    },
    async findPasskey(credentialId) {
      const [row] = await read(
        'factors.findPasskey',
        statements.findFactorByCredential(credentialDigest(credentialId)),
      )
      return row === undefined ? null : toFactor(row)
    },
    confirm: async (userId, id, step, now) =>
      (await write('factors.confirm', statements.confirmFactor(userId, id, step, now))) === 1,
    useStep: async (userId, id, step, now) =>
      (await write('factors.useStep', statements.useFactorStep(userId, id, step, now))) === 1,
    usePasskey: async (id, expected, next, backedUp, now) =>
      (await write('factors.usePasskey', statements.usePasskey(id, expected, next, backedUp, now))) === 1,
    // the codes' deletion reads the factors after this one's deletion, in the same transaction, and after whatever
    // removal of the account's came before (the account's lock): of concurrent removals of its last confirmed
    // factors, the last to run finds none left and deletes the codes
    async remove(userId, id) {
      const [removed] = await writeForAccount('factors.remove', userId, [
        statements.deleteFactor(userId, id),
        statements.deleteRecoveryCodesWithoutFactor(userId),
      ])
      const [count] = await read('factors.remove', statements.countConfirmedFactors(userId))
      return { removed: removed?.changes === 1, remaining: Number(count?.confirmed ?? 0) }
    },
    async removeAll(userId) {
      const [, factors] = await writeForAccount('factors.removeAll', userId, [
        statements.deleteRecoveryCodes(userId),
        statements.deleteFactors(userId),
      ])
      return factors?.changes ?? 0
    },
    async prunePending(before) {
      let deleted = 0
      for (;;) {
        const changes = await write(
          'factors.prunePending',
          statements.prunePendingFactors(before, PRUNE_BATCH),
        )
        deleted += changes
        if (changes < PRUNE_BATCH) return deleted
      }
    },
    // the old set's deletion and the new one's insertion commit together; after the account's lock, so that of
    // concurrent replacements the later deletes what the earlier inserted (PostgreSQL's statement snapshot would
    // not see it otherwise)
    async replaceRecoveryCodes(userId, digests) {
      await writeForAccount('factors.replaceRecoveryCodes', userId, [
        statements.deleteRecoveryCodes(userId),
        ...(digests.length === 0 ? [] : [statements.insertRecoveryCodes(userId, digests)]),
      ])
    },
    useRecoveryCode: async (userId, digest) =>
      (await write('factors.useRecoveryCode', statements.deleteRecoveryCode(userId, digest))) === 1,
    async recoveryCodesLeft(userId) {
      const [count] = await read('factors.recoveryCodesLeft', statements.countRecoveryCodes(userId))
      return Number(count?.codes ?? 0)
    },
  }
}
