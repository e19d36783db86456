/** The longest wait between two attempts at one message. */
export const MAX_RETRY_DELAY_MS = 3_600_000

/** How much of a wait is left to chance, so that the messages of one outage are not all tried at one instant. */
const JITTER = 0.2

/**
 * When a message of the outbox that has now failed `failures` times (this one included) is tried next: `retrySeconds`
 * (MAIL_RETRY_SECONDS, WEBHOOK_RETRY_SECONDS) after the first failure, twice as long after each further one, at most
 * an hour; each wait shortened by up to a fifth at random (`random` in [0, 1)), so that the bound holds and the
 * retries of many messages spread out.
 */
export function nextAttemptAt(
  now: number,
  failures: number,
  retrySeconds: number,
  random: () => number,
): number {
  const doublings = Math.min(Math.max(failures - 1, 0), 32)
  const delay = Math.min(retrySeconds * 1000 * 2 ** doublings, MAX_RETRY_DELAY_MS)
  return now + Math.round(delay * (1 - JITTER * random()))
}
