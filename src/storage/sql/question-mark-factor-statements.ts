import { FACTOR_COLUMNS, FACTOR_INSERT_COLUMNS, FACTOR_PLACEHOLDERS, factorValues } from './factor-rows.js'
import type { SqlStatements } from './sql-statements.js'

/**
 * The statements of the second factors, the recovery codes and the service keys (migration 0009) that the three
 * engines write alike, with `?` placeholders (PostgreSQL numbers them: withNumberedPlaceholders). A flag is read bare
 * (`confirmed`, `NOT confirmed`) and set to TRUE: a BOOLEAN in PostgreSQL and MySQL, and in SQLite an integer that
 * TRUE is 1 of. The account's lock, the pruning, the insertion of several codes, the insertion that leaves an existing
 * key be and the key's compare-and-swap differ, and are in each engine's statements.ts.
 */
export const questionMarkFactorStatements: Pick<
  SqlStatements,
  | 'insertFactor'
  | 'listFactors'
  | 'findFactorByCredential'
  | 'confirmFactor'
  | 'useFactorStep'
  | 'usePasskey'
  | 'deleteFactor'
  | 'deleteRecoveryCodesWithoutFactor'
  | 'countConfirmedFactors'
  | 'deleteFactors'
  | 'deleteRecoveryCodes'
  | 'deleteRecoveryCode'
  | 'countRecoveryCodes'
  | 'findServiceKey'
> = {
  insertFactor: (factor) => ({
    sql: `INSERT INTO mfa_factors (${FACTOR_INSERT_COLUMNS}) VALUES (${FACTOR_PLACEHOLDERS})`,
    parameters: factorValues(factor),
  }),
  // the index (user_id, created_at, id) serves it, in its order
  listFactors: (userId) => ({
    sql: `SELECT ${FACTOR_COLUMNS} FROM mfa_factors WHERE user_id = ? ORDER BY created_at, id`,
    parameters: [userId],
  }),
  findFactorByCredential: (credentialDigest) => ({
    sql: `SELECT ${FACTOR_COLUMNS} FROM mfa_factors WHERE credential_digest = ?`,
    parameters: [credentialDigest],
  }),
  confirmFactor: (userId, id, step, now) => ({
    sql: `UPDATE mfa_factors SET confirmed = TRUE, last_step = ?, last_used_at = ?
      WHERE user_id = ? AND id = ? AND type = 'totp' AND NOT confirmed`,
    parameters: [step, now, userId, id],
  }),
  useFactorStep: (userId, id, step, now) => ({
    sql: `UPDATE mfa_factors SET last_step = ?, last_used_at = ?
      WHERE user_id = ? AND id = ? AND type = 'totp' AND confirmed AND (last_step IS NULL OR last_step < ?)`,
    parameters: [step, now, userId, id, step],
  }),
  usePasskey: (id, expected, next, backedUp, now) => ({
    sql: `UPDATE mfa_factors SET counter = ?, backed_up = ?, last_used_at = ?
      WHERE id = ? AND type = 'passkey' AND counter = ?`,
    parameters: [next, backedUp ? 1 : 0, now, id, expected],
  }),
  deleteFactor: (userId, id) => ({
    sql: 'DELETE FROM mfa_factors WHERE user_id = ? AND id = ?',
    parameters: [userId, id],
  }),
  deleteRecoveryCodesWithoutFactor: (userId) => ({
    sql: `DELETE FROM mfa_recovery_codes WHERE user_id = ?
      AND NOT EXISTS (SELECT 1 FROM mfa_factors WHERE mfa_factors.user_id = ? AND mfa_factors.confirmed)`,
    parameters: [userId, userId],
  }),
  countConfirmedFactors: (userId) => ({
    sql: 'SELECT COUNT(*) AS confirmed FROM mfa_factors WHERE user_id = ? AND confirmed',
    parameters: [userId],
  }),
  deleteFactors: (userId) => ({
    sql: 'DELETE FROM mfa_factors WHERE user_id = ?',
    parameters: [userId],
  }),
  deleteRecoveryCodes: (userId) => ({
    sql: 'DELETE FROM mfa_recovery_codes WHERE user_id = ?',
    parameters: [userId],
  }),
  deleteRecoveryCode: (userId, digest) => ({
    sql: 'DELETE FROM mfa_recovery_codes WHERE user_id = ? AND digest = ?',
    parameters: [userId, digest],
  }),
  countRecoveryCodes: (userId) => ({
    sql: 'SELECT COUNT(*) AS codes FROM mfa_recovery_codes WHERE user_id = ?',
    parameters: [userId],
  }),
  findServiceKey: (name) => ({
    sql: 'SELECT value FROM service_keys WHERE name = ?',
    parameters: [name],
  }),
}
