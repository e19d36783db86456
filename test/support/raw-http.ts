import { connect } from 'node:net'

/**
 * Opens a TCP connection to host:port, writes `payload` at once (raw HTTP: pipelined requests, malformed ones) and
 * resolves with everything the server sent once it closes the connection; rejects when it has not within `withinMs`.
 */
export function exchange(host: string, port: number, payload: string, withinMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => socket.write(payload))
    let text = ''
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1')
    })
    socket.once('error', reject)
    socket.once('close', () => resolve(text))
    socket.setTimeout(withinMs, () => socket.destroy(new Error('the server did not close the connection')))
  })
}
