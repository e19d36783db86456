/** The slice of a logger the outbox's senders write to (pino's). */
export interface DeliveryLog {
  info(fields: Record<string, unknown>, message: string): void
  warn(fields: Record<string, unknown>, message: string): void
  error(fields: Record<string, unknown>, message: string): void
}
