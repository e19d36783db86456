// The bench's own requests outside the measured load (logins for tokens, readiness checks), over HTTP or HTTPS.
// Over HTTPS the certificate is the run's own self-signed one, so it is not verified: fetch cannot be told that.
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'

/**
 * One request on a connection of its own; resolves with the status and the body as text.
 * @param {string} url
 * @param {{ method?: string, json?: unknown, timeoutMs?: number }} [options]
 * @returns {Promise<{ status: number, text: string }>}
 */
export function requestText(url, options = {}) {
  const target = new URL(url)
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  const body = options.json === undefined ? undefined : JSON.stringify(options.json)
  return new Promise((resolve, reject) => {
    const request = send(
      target,
      {
        method: options.method ?? (body === undefined ? 'GET' : 'POST'),
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        agent: false,
        rejectUnauthorized: false,
        servername: 'localhost',
        timeout: options.timeoutMs ?? 10_000,
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk) => {
          text += chunk
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }))
        response.on('error', reject)
      },
    )
    request.on('timeout', () => request.destroy(new Error(`${url}: no answer in time`)))
    request.on('error', reject)
    request.end(body)
  })
}
