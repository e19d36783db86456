import type { EnvReader } from './env-reader.js'

/** The audit trail of security events (docs/api.md "Audit events"). */
export interface AuditConfig {
  /** Days an event is kept before it is pruned; 0 keeps no trail (the events are logged only). */
  retentionDays: number
}

/** AUDIT_RETENTION_DAYS. */
export function readAuditConfig(read: EnvReader): AuditConfig {
  return { retentionDays: read.integer('AUDIT_RETENTION_DAYS', 90, { min: 0, max: 36_500 }) }
}
