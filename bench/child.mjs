// A measurement in a process of its own (the load generator, the Argon2 ceiling): forked, sent one message, and
// answered by one `{ type: 'result', result }` or `{ type: 'error', message }`. Both sides of that exchange are here.
import { fork } from 'node:child_process'

/** @typedef {{ type: 'result', result: unknown } | { type: 'error', message: string }} Reply */

/**
 * The parent's side: forks the module, sends it `message` and resolves with its result. What the result is, the
 * module's own `answerParent` handler says; the caller states it (structured clone keeps plain data as it is).
 * @param {string} modulePath
 * @param {import('node:child_process').Serializable} message
 * @param {string} name for error messages, e.g. "load worker"
 * @returns {Promise<unknown>} the child's result
 */
export function resultOfChild(modulePath, message, name) {
  return new Promise((resolve, reject) => {
    const child = fork(modulePath, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    let settled = false
    child.once('message', (message) => {
      settled = true
      const reply = /** @type {Reply} */ (message)
      if (reply.type === 'result') resolve(reply.result)
      else reject(new Error(`${name} failed: ${reply.message}`))
    })
    child.once('error', (error) => {
      if (!settled) reject(error)
      settled = true
    })
    child.once('exit', (code) => {
      if (!settled) reject(new Error(`${name} exited with ${code} before reporting`))
      settled = true
    })
    child.send(message)
  })
}

/**
 * The child's side: waits for the parent's one message, runs `work` on it, sends back its result or its error and
 * exits (1 after an error).
 * @template M the message the parent sends (resultOfChild's `message`)
 * @param {(message: M) => Promise<import('node:child_process').Serializable>} work
 */
export function answerParent(work) {
  process.once('message', (message) => {
    work(/** @type {M} */ (message)).then(
      (result) => reply({ type: 'result', result }, 0),
      (error) => reply({ type: 'error', message: String(error?.stack ?? error) }, 1),
    )
  })
}

/**
 * @param {Reply} message
 * @param {number} exitCode
 */
function reply(message, exitCode) {
  if (process.send === undefined) throw new Error('not started by resultOfChild: no IPC channel')
  process.send(message, () => process.exit(exitCode))
}
