import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { clientNetwork } from '../client-network.js'
import { type AppError, BadRequestError, ServiceBusyError } from '../errors.js'
import { monotonicNow } from '../time.js'
import { answerWithoutRoute } from './client-error.js'
import type { TrustedProxy } from './trusted-proxies.js'

/**
 * Requests one HTTP/1.1 connection may have read and not yet answered (pipelined): the next is answered 503 and the
 * connection closes after it.
 */
export const MAX_REQUESTS_IN_FLIGHT = 32
/** Answer bytes waiting on one connection for its client to read them: a request that finds more is answered so too. */
export const MAX_BUFFERED_BYTES = 1024 * 1024
/** Requests a closing connection may still send (each costs Node an object until it closes) before it is cut off. */
const MAX_DROPPED_REQUESTS = 4096
/** MAX_CONNECTIONS when unset: the file-descriptor limit less this many for the stores, files and Node itself… */
export const RESERVED_DESCRIPTORS = 128
/** …and at most this many, where the limit is higher (about 8 KiB of memory each when idle). */
export const DEFAULT_MAX_CONNECTIONS = 10_000
/** How often the counts of connections shed, refused and cut off are logged, when there are any. */
const SUMMARY_INTERVAL_MS = 60_000

export interface ConnectionLimits {
  /** Connections open at once; null derives it from the process's file-descriptor limit (`openFileLimit`). */
  maxConnections: number | null
  /** Connections open at once from one client address (an IPv6 /64); a trusted proxy's are not counted. */
  maxConnectionsPerAddress: number
  /** A connection whose answer the client reads none of for this long is closed. */
  writeTimeoutMs: number
}

export interface ConnectionGuard {
  /** Connections open now, and what the guard has done since the start. */
  stats(): ConnectionStats
}

export interface ConnectionStats {
  open: number
  /** Idle keep-alive connections closed to make room for a new one. */
  shed: number
  /** New connections closed at once: every connection of the cap was busy. */
  refused: number
  /** Connections answered 503 and closed for more pipelined requests, or more unread answers, than allowed. */
  overloaded: number
  /** Connections closed because their client read nothing for writeTimeoutMs. */
  writeTimeouts: number
}

interface Connection {
  socket: Socket
  /** The stream the answers are written to: the socket, or the TLS socket over it. */
  stream: Socket
  group: AddressGroup | null
  /** Answers begun and not yet finished. */
  answers: Set<ServerResponse>
  /** Over a limit: the requests it sends are dropped, and it closes once its answers are written. */
  closing: boolean
  /** The requests it sent once closing, which Node holds, unanswered, until it closes. */
  dropped: IncomingMessage[]
  closed: boolean
  /** Bytes the stream had flushed at the last check, and since when that has not changed. */
  flushed: number
  stalledSince: number
  /** When its last answer was finished, as a sequence number: the lowest of the idle ones has been idle longest. */
  idleSince: number
}

interface AddressGroup {
  key: string
  /** This address's connections. */
  members: Set<Connection>
}

/** The connection an answer belongs to, kept on the answer itself so that one shared listener serves them all. */
const CONNECTION = Symbol('tessera.connection')
type TrackedResponse = ServerResponse & { [CONNECTION]?: Connection }

/**
 * Bounds what clients can hold of the process (docs/api.md §8): connections in all and per client address, requests
 * pipelined on one connection, answers buffered for a client that does not read them, and how long it may not read.
 *
 * When a cap is reached, the connection idle the longest (first of the address at its cap, else of all) is closed to
 * make room; a new connection is refused only when every connection of the cap is busy. The request past
 * MAX_REQUESTS_IN_FLIGHT is answered 503 after those in flight, the connection closes after it, and nothing sent
 * after it is parsed (stopParsing).
 *
 * Takes the server's 'request' listeners (Fastify's handler) and calls them only for the requests it admits.
 */
export function guardConnections(
  server: Server,
  limits: ConnectionLimits,
  deps: {
    logger: FastifyBaseLogger
    /** TRUST_PROXY (trusted-proxies.ts), the matcher Fastify is given too; null trusts no peer. */
    trustedProxy: TrustedProxy | null
    /** The process's file-descriptor limit, read once at start (file-descriptor-limit.ts); null where unknown. */
    openFileLimit: number | null
    /** Told the status of each answer the guard gives itself (400, 417, 503), for the metrics. */
    answeredBeforeRouting?: ((status: number) => void) | null
  },
): ConnectionGuard {
  const maxConnections = limits.maxConnections ?? defaultMaxConnections(deps.openFileLimit)
  const trusted = deps.trustedProxy
  const connections = new Map<Socket, Connection>()
  const groups = new Map<string, AddressGroup>()
  const counts = { shed: 0, refused: 0, overloaded: 0, writeTimeouts: 0 }
  let logged = { ...counts }
  // The idle order is kept lazily: a request costs a counter and a number, and only shedding (at a cap, rare) looks
  // for the longest idle connection. Keeping ordered sets up to date on every request cost GET /auth/me about 15 %.
  let sequence = 0

  const forget = (connection: Connection) => {
    if (connection.closed) return
    connection.closed = true
    connections.delete(connection.socket)
    const group = connection.group
    if (group !== null) {
      group.members.delete(connection)
      if (group.members.size === 0) groups.delete(group.key)
    }
  }
  const close = (connection: Connection, counter: keyof typeof counts) => {
    counts[counter]++
    forget(connection)
    connection.socket.destroy()
  }
  /** Makes room by closing the longest idle of `among`; false when none is idle. */
  const shedOne = (among: Iterable<Connection>): boolean => {
    let oldest: Connection | undefined
    for (const connection of among) {
      if (
        connection.answers.size === 0 &&
        (oldest === undefined || connection.idleSince < oldest.idleSince)
      ) {
        oldest = connection
      }
    }
    if (oldest === undefined) return false
    close(oldest, 'shed')
    return true
  }

  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    if (address === undefined) return void socket.destroy()
    // the socket's peer is hop 0, as Fastify asks about it for X-Forwarded-For
    const key = trusted?.(address, 0) ? null : clientNetwork(address)
    let group = key === null ? null : (groups.get(key) ?? null)
    const admitted =
      (group === null || group.members.size < limits.maxConnectionsPerAddress || shedOne(group.members)) &&
      (connections.size < maxConnections || shedOne(connections.values()))
    if (!admitted) {
      counts.refused++
      return void socket.destroy()
    }
    if (key !== null && group === null) {
      group = { key, members: new Set() }
      groups.set(key, group)
    }
    const connection: Connection = {
      socket,
      stream: socket,
      group,
      answers: new Set(),
      closing: false,
      dropped: [],
      closed: false,
      flushed: 0,
      stalledSince: monotonicNow(),
      idleSince: ++sequence,
    }
    connections.set(socket, connection)
    group?.members.add(connection)
    socket.once('close', () => forget(connection))
  })

  /** Answers without a route (client-error.ts), and counts the answer. */
  const answer = (request: IncomingMessage, response: ServerResponse, error: AppError) => {
    deps.answeredBeforeRouting?.(error.statusCode)
    answerWithoutRoute(request, response, error)
  }

  /** The connection a request came on; a TLS socket (or an HTTP/2 stream's) is not the one 'connection' saw. */
  const connectionOf = (request: IncomingMessage): Connection | undefined => {
    const socket = request.socket as Socket & { _parent?: Socket | null }
    return connections.get(socket) ?? (socket._parent ? connections.get(socket._parent) : undefined)
  }

  /** Admits a request, or closes its connection (false). Counts the answers in flight. */
  const admit = (request: IncomingMessage, response: ServerResponse): boolean => {
    const connection = connectionOf(request)
    // no longer tracked: closed by the guard, and this request is the rest of a pipelined burst
    if (connection === undefined) return !request.socket.destroyed
    if (connection.closed) return false
    if (connection.closing) {
      connection.dropped.push(request)
      if (connection.dropped.length > MAX_DROPPED_REQUESTS) close(connection, 'overloaded')
      return false
    }
    track(connection, response)
    // HTTP/2 multiplexes: the session's maxConcurrentStreams and its flow control bound its streams and their bytes
    if (request.httpVersionMajor !== 1) return true
    connection.stream = request.socket
    if (connection.answers.size > MAX_REQUESTS_IN_FLIGHT || bufferedBytes(connection) > MAX_BUFFERED_BYTES) {
      // answered in turn, after the answers in flight; Node closes the connection once it is written
      counts.overloaded++
      connection.closing = true
      abortTogether(request.socket, connection)
      stopParsing(request.socket)
      answer(request, response, new ServiceBusyError())
      return false
    }
    return true
  }
  /** Counts an answer in flight until it is written or its connection closes. */
  const track = (connection: Connection, response: TrackedResponse) => {
    connection.answers.add(response)
    response[CONNECTION] = connection
    response.on('close', answerClosed)
  }
  function answerClosed(this: TrackedResponse) {
    const connection = this[CONNECTION]
    if (connection === undefined) return
    connection.answers.delete(this)
    if (connection.answers.size === 0) connection.idleSince = ++sequence
  }

  // Node answers an HTTP/1.1 request without Host, or with an Expect it cannot meet, with an empty 400 or 417: these
  // get the envelope here instead (docs/api.md R1.2)
  Object.assign(server, { requireHostHeader: false })
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    if (admit(request, response)) {
      answer(request, response, new BadRequestError(417))
    }
  })
  const handlers = server.listeners('request') as Array<
    (request: IncomingMessage, response: ServerResponse) => void
  >
  server.removeAllListeners('request')
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!admit(request, response)) return
    if (request.httpVersion === '1.1' && request.headers.host === undefined) {
      return answer(request, response, new BadRequestError(400))
    }
    for (const handler of handlers) handler.call(server, request, response)
  })

  // a client that reads nothing of an answer for writeTimeoutMs is cut off: a duration, on the monotonic clock (the
  // service clock is the domain's "now", which a test may fix or fail; a timer of the guard must never throw)
  const checkWrites = () => {
    const now = monotonicNow()
    for (const connection of connections.values()) {
      if (connection.answers.size === 0) continue
      const { stream } = connection
      const pending = stream.writableLength
      const flushed = stream.bytesWritten - pending
      if (pending === 0 || flushed !== connection.flushed) {
        connection.flushed = flushed
        connection.stalledSince = now
      } else if (now - connection.stalledSince >= limits.writeTimeoutMs) {
        close(connection, 'writeTimeouts')
      }
    }
  }
  const summarize = () => {
    if (Object.entries(counts).every(([name, count]) => logged[name as keyof typeof counts] === count)) return
    const since = Object.fromEntries(
      Object.entries(counts).map(([name, count]) => [name, count - logged[name as keyof typeof counts]]),
    )
    deps.logger.warn(
      { ...since, open: connections.size, maxConnections },
      'connection limits applied in the last minute',
    )
    logged = { ...counts }
  }
  let timers: NodeJS.Timeout[] = []
  server.on('listening', () => {
    timers = [
      setInterval(checkWrites, Math.min(1_000, Math.max(50, limits.writeTimeoutMs / 4))),
      setInterval(summarize, SUMMARY_INTERVAL_MS),
    ]
    for (const timer of timers) timer.unref()
  })
  server.on('close', () => {
    for (const timer of timers) clearInterval(timer)
  })

  return {
    stats: () => ({ open: connections.size, ...counts }),
  }
}

/**
 * When a connection closes, Node destroys every request it read and did not answer, each with an Error of its own
 * (ECONNRESET, "aborted"), and the stream's destroy formats that error's stack at once: for the requests of a closing
 * connection, in flight and dropped, that was more than half of what its close cost. The guard destroys them first,
 * just before Node's own 'close' listener, with one such error for them all (the connection closed once), so that
 * Node finds them destroyed already and formats no more stacks. (Node still makes its errors, and captures their
 * stacks, as it does for any connection closed with requests in flight; stopParsing keeps those to 33.)
 */
function abortTogether(socket: Socket, connection: Connection): void {
  socket.prependOnceListener('close', () => {
    let error: (Error & { code?: string }) | undefined
    const abort = (request: IncomingMessage) => {
      if (request.destroyed) return
      error ??= Object.assign(new Error('aborted'), { code: 'ECONNRESET' })
      request.destroy(error)
    }
    // an answer finished has left Node's list of requests to abort, and so stays out of this one
    for (const answer of connection.answers) if (!answer.writableFinished) abort(answer.req)
    for (const request of connection.dropped) abort(request)
  })
}

/** The slice of Node's HTTP parser (node:_http_common) that stopParsing uses. */
interface NodeHttpParser {
  onIncoming: (request: IncomingMessage & { upgrade: boolean }, keepAlive: boolean) => number
}

/**
 * Ends what a closing connection costs the process. Node's parser reads a whole chunk (64 KiB) of pipelined requests
 * at once and makes a request and an answer object for each, which pausing the socket does not stop: 300 connections
 * writing 1,500 requests each held the event loop for about 2 s, even in a bare Node server. So the socket reads no
 * more, and the parser stops at the next request of the chunk it is in: it asks `onIncoming` what to do with each
 * request, and 2 (llhttp's answer for an upgrade, which it is not made to be) ends the chunk there, unread. Where
 * Node has no such parser, only the socket is paused and the requests it still parses are dropped by `admit`.
 */
function stopParsing(socket: Socket): void {
  socket.pause()
  const parser = (socket as Socket & { parser?: Partial<NodeHttpParser> | null }).parser
  if (typeof parser?.onIncoming !== 'function') return
  parser.onIncoming = (request) => {
    request.upgrade = false
    return 2
  }
}

/** Bytes of answers waiting on a connection: those written to its socket and those queued behind them. */
function bufferedBytes(connection: Connection): number {
  let bytes = connection.stream.writableLength
  // an answer queued behind another holds its bytes until it gets the socket
  for (const answer of connection.answers) if (answer.socket === null) bytes += answer.writableLength
  return bytes
}

/** MAX_CONNECTIONS when unset: what the file-descriptor limit leaves, at most DEFAULT_MAX_CONNECTIONS. */
export function defaultMaxConnections(openFileLimit: number | null): number {
  if (openFileLimit === null) return DEFAULT_MAX_CONNECTIONS
  return Math.max(16, Math.min(DEFAULT_MAX_CONNECTIONS, openFileLimit - RESERVED_DESCRIPTORS))
}
