import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy in front of a real server, to take it away from the service and bring it back:
 * - `forward`: passes bytes both ways;
 * - `refuse`: the port is closed and every connection cut (the server is down);
 * - `blackhole`: connections stay open but nothing passes (the server hangs).
 */
export interface TcpProxy {
  port: number
  mode(next: 'forward' | 'refuse' | 'blackhole'): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let current: 'forward' | 'refuse' | 'blackhole' = 'forward'
  const pairs = new Set<[Socket, Socket | null]>()

  const onConnection = (client: Socket) => {
    if (current !== 'forward') {
      // held open, never answered
      const pair: [Socket, Socket | null] = [client, null]
      pairs.add(pair)
      client.on('close', () => pairs.delete(pair))
      client.on('error', () => {})
      return
    }
    const upstream = connect(target.port, target.host)
    const pair: [Socket, Socket | null] = [client, upstream]
    pairs.add(pair)
    client.pipe(upstream)
    upstream.pipe(client)
    const end = () => {
      client.destroy()
      upstream.destroy()
      pairs.delete(pair)
    }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  }

  const listen = (server: Server, port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => resolve())
    })
  let server = createServer(onConnection)
  await listen(server, 0)
  const port = (server.address() as { port: number }).port

  const cutAll = () => {
    for (const [client, upstream] of pairs) {
      client.destroy()
      upstream?.destroy()
    }
    pairs.clear()
  }

  return {
    port,
    async mode(next) {
      if (next === current) return
      const previous = current
      current = next
      if (next === 'blackhole') {
        for (const [client, upstream] of pairs) {
          client.unpipe()
          upstream?.unpipe()
          client.pause()
          upstream?.pause()
        }
      } else {
        // leaving a hang or entering an outage: every connection is cut, as a restarted server would
        cutAll()
      }
      if (next === 'refuse') {
        await new Promise<void>((resolve) => server.close(() => resolve()))
      } else if (previous === 'refuse') {
        server = createServer(onConnection)
        await listen(server, port)
      }
    },
    async close() {
      cutAll()
      if (current !== 'refuse') await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
