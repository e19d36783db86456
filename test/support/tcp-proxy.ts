import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy in front of a real server, to take it away from the service and bring it back:
 * - `forward`: passes bytes both ways;
 * - `refuse`: the port is closed and every connection cut (the server is down);
 * - `blackhole`: connections stay open but nothing passes (the server hangs); leaving it cuts every connection;
 * - `hold`: nothing passes, and everything sent meanwhile is delivered when `forward` comes back, as to a server
 *   that was paused (SIGSTOP) and resumed: its kernel kept the bytes, and a client that hung up meanwhile is seen
 *   to have hung up only after them.
 */
export interface TcpProxy {
  port: number
  mode(next: 'forward' | 'refuse' | 'blackhole' | 'hold'): Promise<void>
  close(): Promise<void>
}

interface Pair {
  client: Socket
  upstream: Socket | null
  /** Bytes held back in `hold`, each way. */
  toUpstream: Buffer[]
  toClient: Buffer[]
  /** The client hung up while held: the upstream sees it after the held bytes. */
  clientGone: boolean
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let current: 'forward' | 'refuse' | 'blackhole' | 'hold' = 'forward'
  const pairs = new Set<Pair>()

  const onConnection = (client: Socket) => {
    const pair: Pair = { client, upstream: null, toUpstream: [], toClient: [], clientGone: false }
    pairs.add(pair)
    client.on('error', () => {})
    if (current === 'blackhole') {
      // held open, never answered
      client.on('close', () => pairs.delete(pair))
      return
    }
    const upstream = connect(target.port, target.host)
    pair.upstream = upstream
    upstream.on('error', () => {})
    client.on('data', (chunk: Buffer) => {
      if (current === 'forward') upstream.write(chunk)
      else pair.toUpstream.push(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (current === 'forward') client.write(chunk)
      else pair.toClient.push(chunk)
    })
    client.on('close', () => {
      if (current === 'hold') {
        pair.clientGone = true
        return
      }
      upstream.destroy()
      pairs.delete(pair)
    })
    upstream.on('close', () => {
      client.destroy()
      pairs.delete(pair)
    })
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
    for (const { client, upstream } of pairs) {
      client.destroy()
      upstream?.destroy()
    }
    pairs.clear()
  }

  /** Delivers what `hold` kept, then lets bytes pass again; a client that left meanwhile is then hung up on. */
  const release = () => {
    for (const pair of pairs) {
      const { client, upstream } = pair
      for (const chunk of pair.toUpstream.splice(0)) upstream?.write(chunk)
      if (pair.clientGone) {
        upstream?.end()
        pairs.delete(pair)
        continue
      }
      for (const chunk of pair.toClient.splice(0)) client.write(chunk)
    }
  }

  return {
    port,
    async mode(next) {
      if (next === current) return
      const previous = current
      current = next
      if (previous === 'hold') release()
      if (next === 'refuse' || (next === 'forward' && previous !== 'hold')) {
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
