const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})?)?$/

/**
 * An ISO 8601 date or time (2026-11-01, 2026-11-01T08:00Z; UTC unless it names an offset) as epoch milliseconds: where
 * a read of the audit trail starts (`tessera audit --since`, GET /admin/audit?since=). Null for any other text, and
 * for a date that does not exist (2026-02-30), which Date.UTC would roll over into the next month.
 */
export function parseIsoTime(value: string): number | null {
  const date = ISO_TIME.exec(value)
  if (date === null) return null
  const [year, month, day, hour = 0, minute = 0, second = 0] = date
    .slice(1, 7)
    .map((part) => Number(part ?? 0))
  const millisecond = Number((date[7] ?? '0').padEnd(3, '0'))
  const at = Date.UTC(year as number, (month as number) - 1, day, hour, minute, second, millisecond)
  const check = new Date(at)
  const exists =
    check.getUTCFullYear() === year &&
    check.getUTCMonth() === (month as number) - 1 &&
    check.getUTCDate() === day &&
    check.getUTCHours() === hour &&
    check.getUTCMinutes() === minute &&
    check.getUTCSeconds() === second
  return exists ? at - offsetMs(date[8]) : null
}

function offsetMs(zone: string | undefined): number {
  if (zone === undefined || zone === 'Z') return 0
  const sign = zone.startsWith('-') ? -1 : 1
  const [hours, minutes] = zone.slice(1).split(':').map(Number)
  return sign * ((hours as number) * 60 + (minutes as number)) * 60_000
}
