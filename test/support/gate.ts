/**
 * A store call held at its start until released: a test wraps a store method so that it awaits `pass()`, closes the
 * gate, starts a request, waits until the call has `arrived`, does what must fall in the middle of that request (an
 * operator's command, a deletion), then opens the gate.
 */
export function createGate() {
  let closed = false
  let reached: () => void = () => {}
  let release: () => void = () => {}
  const arrived = new Promise<void>((resolve) => {
    reached = resolve
  })
  const opened = new Promise<void>((resolve) => {
    release = resolve
  })
  return {
    close() {
      closed = true
    },
    /** Resolves when a call has arrived at the closed gate. */
    arrived,
    open() {
      closed = false
      release()
    },
    /** Where a store call waits while the gate is closed. */
    async pass() {
      if (!closed) return
      reached()
      await opened
    },
  }
}
