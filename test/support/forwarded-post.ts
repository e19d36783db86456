import { type Agent, request } from 'node:http'

/**
 * POSTs a JSON body over a keep-alive connection of `agent` to 127.0.0.1:`port`, as a trusted proxy would forward a
 * client's request from `address` (X-Forwarded-For, and X-Forwarded-Proto: https, the proxy having ended TLS);
 * resolves with the status and the body's text.
 */
export function forwardedPost(
  agent: Agent,
  port: number | string,
  path: string,
  body: unknown,
  address: string,
): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          'x-forwarded-for': address,
          'x-forwarded-proto': 'https',
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}
