// A measurement in a process of its own (the load generator, the Argon2 ceiling): forked, sent one message, and
// answered by one `{ type: 'result', result }` or `{ type: 'error', message }`.
import { fork } from 'node:child_process'

/**
 * @param {string} modulePath
 * @param {unknown} message
 * @param {string} name for error messages, e.g. "load worker"
 * @returns {Promise<any>} the child's result
 */
export function resultOfChild(modulePath, message, name) {
  return new Promise((resolve, reject) => {
    const child = fork(modulePath, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    let settled = false
    child.once('message', (/** @type {any} */ reply) => {
      settled = true
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
