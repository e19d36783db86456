// One Argon2 thread of the login floor (bare-login-server.mjs): it verifies the jobs it is sent one at a time with
// @node-rs/argon2's synchronous call, the next waiting on this thread's own port, as the service's threads do
// (src/auth/argon2-thread.js).
import { parentPort } from 'node:worker_threads'
import { verifySync } from '@node-rs/argon2'

/** @typedef {{ id: number, stored: string, password: string }} FloorJob */

const port = parentPort
if (port === null) throw new Error('bare-login-thread.mjs runs only as a worker thread')

port.on('message', (/** @type {FloorJob} */ job) => {
  port.postMessage({ id: job.id, ok: verifySync(job.stored, job.password) })
})
