import { once } from 'node:events'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { type AddressObject, simpleParser } from 'mailparser'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'

/** A message as the test SMTP server received it, parsed with mailparser. */
export interface ReceivedMail {
  /** The envelope's recipients (RCPT TO), lower-cased. */
  to: string[]
  /** The envelope's sender (MAIL FROM). */
  from: string
  /** The From header as written. */
  fromHeader: string
  subject: string
  text: string
  html: string
  /** The Message-ID header, angle brackets included. */
  messageId: string
  headers: Map<string, unknown>
  /** The message as it came over the wire. */
  raw: string
  /** Whether the connection was encrypted (smtps, or upgraded by STARTTLS). */
  secure: boolean
  /** The user name the client logged in with; null without a login. */
  user: string | null
}

/** What the server answers to RCPT TO (or to the end of DATA): `temporary` 451, `permanent` 550. */
export type Refusal =
  | 'temporary'
  | 'permanent'
  | { code: number; message?: string; at?: 'rcpt' | 'data' }
  | null

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>` (with the credentials when the server asks for a login): for SMTP_URL. */
  readonly url: string
  readonly port: number
  /** Every message received so far, oldest first (kept across stop() and start()). */
  readonly messages: readonly ReceivedMail[]
  /** How many connections clients opened so far. */
  readonly connections: number
  /**
   * The first message received (or to come) that matches `predicate` and that no earlier next() returned; rejects
   * after `timeoutMs`.
   */
  next(predicate?: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>
  /** Refuses every following message this way, until refuse(null). */
  refuse(refusal: Refusal): void
  /** Stops listening and ends open connections: the port refuses connections until start(). */
  stop(): Promise<void>
  /** Listens again on the same port. */
  start(): Promise<void>
}

export interface TestSmtpServerOptions {
  /** The port; a free one by default. */
  port?: number
  /** A certificate to offer STARTTLS with (test/support/certificates.ts); without it STARTTLS is not offered. */
  tls?: { key: Buffer | string; cert: Buffer | string }
  /** TLS from the first byte (smtps://); needs `tls`. */
  implicitTls?: boolean
  /** The login the server requires; none by default. */
  login?: { user: string; pass: string }
  /**
   * How long the server takes to answer each command of a message (MAIL FROM, RCPT TO, the end of DATA): a slow
   * relay. None by default.
   */
  replyDelayMs?: number
}

/**
 * A real SMTP server (the `smtp-server` package) on 127.0.0.1, for tests: it keeps each message it accepts, parsed,
 * and can be told to refuse them, or stopped and started again on the same port (a mail server that goes down and
 * comes back). Call stop() when done.
 */
export async function startSmtpServer(options: TestSmtpServerOptions = {}): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = []
  const taken = new Set<ReceivedMail>()
  const waiters = new Set<() => void>()
  let refusal: Refusal = null
  let connections = 0
  let server: SMTPServer | null = null
  let port = options.port ?? 0
  const later = (answer: () => void) => {
    if (options.replyDelayMs === undefined) answer()
    else setTimeout(answer, options.replyDelayMs)
  }

  const refusalError = (stage: 'rcpt' | 'data'): Error | null => {
    if (refusal === null) return null
    const { code, message, at } =
      refusal === 'temporary'
        ? { code: 451, message: '4.3.0 Try again later', at: 'rcpt' }
        : refusal === 'permanent'
          ? { code: 550, message: '5.1.1 No such mailbox here', at: 'rcpt' }
          : refusal
    if ((at ?? 'rcpt') !== stage) return null
    return Object.assign(new Error(message ?? `${code} refused by the test server`), { responseCode: code })
  }

  const serverOptions: SMTPServerOptions = {
    logger: false,
    banner: 'tessera test SMTP server',
    // a stop() with a client's idle pooled connection open ends it at once
    closeTimeout: 100,
    ...(options.tls === undefined
      ? { disabledCommands: ['STARTTLS'] }
      : { key: options.tls.key, cert: options.tls.cert }),
    ...(options.implicitTls ? { secure: true } : {}),
    ...(options.login === undefined
      ? { authOptional: true }
      : { authOptional: false, allowInsecureAuth: true, authMethods: ['PLAIN', 'LOGIN'] }),
    onConnect(_session, callback) {
      connections++
      callback()
    },
    onAuth(auth, _session, callback) {
      const login = options.login
      if (login !== undefined && auth.username === login.user && auth.password === login.pass)
        return callback(null, { user: auth.username })
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }))
    },
    onMailFrom(_address, _session, callback) {
      later(() => callback())
    },
    onRcptTo(_address, _session, callback) {
      later(() => callback(refusalError('rcpt')))
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => later(() => received()))
      const received = () => {
        const refused = refusalError('data')
        if (refused !== null) return callback(refused)
        const raw = Buffer.concat(chunks).toString('utf8')
        simpleParser(raw).then(
          (parsed) => {
            messages.push({
              to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
              from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
              fromHeader: addressText(parsed.from),
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              messageId: parsed.messageId ?? '',
              headers: parsed.headers,
              raw,
              secure: session.secure,
              user: typeof session.user === 'string' ? session.user : null,
            })
            for (const wake of waiters) wake()
            callback()
          },
          (error: unknown) => callback(error as Error),
        )
      }
    },
  }

  const listen = async () => {
    const started = new SMTPServer(serverOptions)
    started.on('error', () => {})
    const address = await new Promise<AddressInfo>((resolve, reject) => {
      const listening = started.listen(port, '127.0.0.1', () => {
        listening.off('error', reject)
        resolve(listening.address() as AddressInfo)
      })
      listening.once('error', reject)
    })
    port = address.port
    server = started
  }

  await listen()
  const credentials =
    options.login === undefined
      ? ''
      : `${encodeURIComponent(options.login.user)}:${encodeURIComponent(options.login.pass)}@`
  const scheme = options.implicitTls ? 'smtps' : 'smtp'

  return {
    get url() {
      return `${scheme}://${credentials}127.0.0.1:${port}`
    },
    get port() {
      return port
    },
    messages,
    get connections() {
      return connections
    },
    next(predicate = () => true, timeoutMs = 10_000) {
      return new Promise<ReceivedMail>((resolve, reject) => {
        const look = () => {
          const found = messages.find((mail) => !taken.has(mail) && predicate(mail))
          if (found === undefined) return false
          taken.add(found)
          waiters.delete(look)
          clearTimeout(timer)
          resolve(found)
          return true
        }
        const timer = setTimeout(() => {
          waiters.delete(look)
          reject(new Error(`no matching message within ${timeoutMs} ms (${messages.length} received)`))
        }, timeoutMs)
        if (!look()) waiters.add(look)
      })
    },
    refuse(next) {
      refusal = next
    },
    async stop() {
      const running = server
      server = null
      if (running !== null) await new Promise<void>((resolve) => running.close(() => resolve()))
    },
    async start() {
      if (server === null) await listen()
    },
  }
}

function addressText(address: AddressObject | AddressObject[] | undefined): string {
  if (address === undefined) return ''
  return (Array.isArray(address) ? address : [address]).map((entry) => entry.text).join(', ')
}

/** A mail server that accepts connections and never says a word: a send to it hangs until it is abandoned. */
export interface SilentSmtpServer {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  readonly url: string
  /** Connections opened to it so far. */
  opened(): number
  /** Of those, how many the client closed (the server closes none). */
  closed(): number
  /** Ends the connections and stops listening. */
  stop(): void
}

export async function startSilentSmtpServer(): Promise<SilentSmtpServer> {
  const sockets = new Set<Socket>()
  let closed = 0
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => void closed++)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    opened: () => sockets.size,
    closed: () => closed,
    stop() {
      for (const socket of sockets) socket.destroy()
      server.close()
    },
  }
}
