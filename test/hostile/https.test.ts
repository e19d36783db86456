import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request as http1Request, type IncomingHttpHeaders } from 'node:http'
import { connect as http2Connect } from 'node:http2'
import { request as httpsRequest } from 'node:https'
import { connect as netConnect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect as tlsConnect } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { backends } from '../support/backends.js'
import { makeCertificate, type TestCertificate } from '../support/certificates.js'
import { call, expectError, PASSWORD, uniqueEmail } from '../support/http.js'
import { type RunningService, runCli, startProcess } from '../support/process.js'
import { startTestService, type TestService } from '../support/test-service.js'

// issue 11, "nothing in it speaks HTTPS": docs/api.md §5.7. Every request goes to 127.0.0.1 and is bounded.

const STRONG_SECRET = 'k7Qx2PzR9vLmN4bT8wYcE1hJ6sUaG3dF5iO0pV-_'

interface Answer {
  status: number
  version: string
  headers: IncomingHttpHeaders
  body: string
}

/** One HTTP/1.1 request over a connection of its own, verifying the certificate against `ca`. */
function overHttp1(url: string, path: string, ca: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(new URL(path, url), { ca, agent: false, timeout: 5_000 }, (response) => {
      let body = ''
      response.on('data', (chunk) => {
        body += chunk
      })
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          version: response.httpVersion,
          headers: response.headers,
          body,
        }),
      )
    })
    request.on('timeout', () => request.destroy(new Error('timed out')))
    request.on('error', reject)
    request.end()
  })
}

/** One HTTP/2 request (node:http2's client, which offers only h2), verifying the certificate against `ca`. */
function overHttp2(
  url: string,
  options: { path: string; method?: string; body?: unknown; token?: string },
  ca: Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(url, { ca })
    session.on('error', reject)
    const headers: Record<string, string> = { ':path': options.path, ':method': options.method ?? 'GET' }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
    const stream = session.request(headers)
    stream.setTimeout(5_000, () => stream.close())
    let status = 0
    let received: IncomingHttpHeaders = {}
    let body = ''
    stream.on('response', (responseHeaders) => {
      status = Number(responseHeaders[':status'])
      received = responseHeaders as IncomingHttpHeaders
    })
    stream.on('data', (chunk) => {
      body += chunk
    })
    stream.on('end', () => {
      session.close()
      resolve({ status, version: '2.0', headers: received, body })
    })
    stream.on('error', reject)
    stream.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  })
}

/** The SHA-256 fingerprint of the certificate a new TLS connection is given. */
function servedFingerprint(url: string): Promise<string> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: hostname,
      port: Number(port),
      servername: 'localhost',
      rejectUnauthorized: false,
    })
    socket.setTimeout(5_000, () => socket.destroy(new Error('timed out')))
    socket.once('secureConnect', () => {
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? ''
      socket.end()
      resolve(fingerprint)
    })
    socket.once('error', reject)
  })
}

/** Resolves once `count` stdout lines of `service` contain `text`; fails after 10 s. */
async function waitForLines(service: RunningService, text: string, count = 1): Promise<void> {
  const deadline = Date.now() + 10_000
  while (service.stdout.filter((line) => line.includes(text)).length < count) {
    if (Date.now() > deadline) throw new Error(`no ${count} × "${text}" in:\n${service.stdout.join('\n')}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('R5.7 HTTPS with TLS_CERT_FILE and TLS_KEY_FILE (a real process)', () => {
  let dir: string
  let first: TestCertificate
  let renewed: TestCertificate
  /** The files the service is configured with; a test copies a certificate over them. */
  let live: { certFile: string; keyFile: string }
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-https-'))
    first = await makeCertificate(dir, 'first')
    renewed = await makeCertificate(dir, 'renewed')
    live = { certFile: join(dir, 'live-cert.pem'), keyFile: join(dir, 'live-key.pem') }
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  const install = async (certificate: TestCertificate) => {
    await copyFile(certificate.certFile, live.certFile)
    await copyFile(certificate.keyFile, live.keyFile)
  }
  const start = async (env: Record<string, string> = {}) => {
    await install(first)
    return startProcess({
      DATA_DIR: join(dir, `data-${Math.random().toString(36).slice(2)}`),
      TLS_CERT_FILE: live.certFile,
      TLS_KEY_FILE: live.keyFile,
      ...env,
    })
  }

  it('R5.7.4 serves HTTPS over HTTP/1.1 and HTTP/2, with Strict-Transport-Security, and no plain HTTP', async () => {
    const service = await start()
    try {
      expect(service.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      const health = await overHttp1(service.url, '/health', first.cert)
      expect(health).toMatchObject({ status: 200, version: '1.1' })
      expect(health.headers['strict-transport-security']).toBe('max-age=31536000')
      expect(health.headers['x-content-type-options']).toBe('nosniff')

      const email = uniqueEmail()
      const registered = await overHttp2(
        service.url,
        { path: '/auth/register', method: 'POST', body: { email, password: PASSWORD } },
        first.cert,
      )
      expect(registered.status, registered.body).toBe(200)
      expect(registered.headers['strict-transport-security']).toBe('max-age=31536000')
      expect(registered.headers['cache-control']).toBe('no-store')
      const me = await overHttp2(
        service.url,
        { path: '/auth/me', token: JSON.parse(registered.body).data.access_token },
        first.cert,
      )
      expect(me.status).toBe(200)
      expect(JSON.parse(me.body).data.email).toBe(email)

      // plain HTTP to the HTTPS port gets no answer
      const { port } = new URL(service.url)
      await expect(
        new Promise((resolve, reject) => {
          const request = http1Request({ host: '127.0.0.1', port, path: '/health', timeout: 5_000 }, resolve)
          request.on('timeout', () => request.destroy(new Error('timed out')))
          request.on('error', reject)
          request.end()
        }),
      ).rejects.toThrow()
    } finally {
      expect(await service.stop()).toBe(0)
    }
  })

  it('R5.7.4 SIGTERM with an idle HTTP/2 connection open: the connection is told to go away and the service exits 0', async () => {
    const service = await start()
    const session = http2Connect(service.url, { ca: first.cert })
    try {
      const closed = new Promise((resolve) => session.once('close', resolve))
      session.on('error', () => {})
      const stream = session.request({ ':path': '/health' })
      stream.resume()
      await new Promise((resolve) => stream.once('end', resolve))
      const started = Date.now()
      expect(await service.stop()).toBe(0)
      await closed
      // under the shutdown deadline (30 s) and the idle timeout (72 s), with room for a loaded machine
      expect(Date.now() - started).toBeLessThan(20_000)
    } finally {
      session.destroy()
    }
  }, 60_000)

  it('R5.7.4 over HTTPS a slow client is cut off too: one that never completes the handshake, one that never ends its headers', async () => {
    const service = await start({ HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000' })
    try {
      const { port } = new URL(service.url)
      const closedWithin = (socket: Socket) =>
        new Promise<number>((resolve) => {
          const started = Date.now()
          socket.on('error', () => {})
          socket.once('close', () => resolve(Date.now() - started))
          // read whatever comes (a 408): a socket never read never sees the end of its stream
          socket.resume()
        })
      // TCP only: no ClientHello ever comes
      const silent = netConnect(Number(port), '127.0.0.1')
      // TLS, then half a request
      const slow = tlsConnect({
        host: '127.0.0.1',
        port: Number(port),
        ca: first.cert,
        servername: 'localhost',
      })
      slow.once('secureConnect', () => slow.write('GET /health HTTP/1.1\r\nHost: localhost\r\n'))
      const [silentMs, slowMs] = await Promise.all([closedWithin(silent), closedWithin(slow)])
      // the settings' second, not Node's defaults (60 s for the headers): the bound leaves a loaded machine room
      expect(silentMs).toBeLessThan(20_000)
      expect(slowMs).toBeLessThan(20_000)
      expect((await overHttp1(service.url, '/health', first.cert)).status).toBe(200)
    } finally {
      expect(await service.stop()).toBe(0)
    }
  }, 60_000)

  it('R5.7.5 SIGHUP: new connections get the renewed certificate, with no restart', async () => {
    const service = await start()
    try {
      expect(await servedFingerprint(service.url)).toBe(first.fingerprint256)
      await install(renewed)
      service.child.kill('SIGHUP')
      await waitForLines(service, 'TLS certificate reloaded')
      expect(await servedFingerprint(service.url)).toBe(renewed.fingerprint256)
      expect((await overHttp1(service.url, '/health', renewed.cert)).status).toBe(200)
      expect(service.child.exitCode).toBeNull()
      expect(service.stdout.filter((line) => line.includes('listening on'))).toHaveLength(1)
    } finally {
      expect(await service.stop()).toBe(0)
    }
  })

  it('R5.7.5 SIGHUP with files that are not a usable pair: logged, and the current certificate still served', async () => {
    const service = await start()
    try {
      // the renewed certificate with the old key: a renewal caught half-way
      await copyFile(renewed.certFile, live.certFile)
      service.child.kill('SIGHUP')
      await waitForLines(service, 'TLS certificate not reloaded')
      expect(await servedFingerprint(service.url)).toBe(first.fingerprint256)
      await writeFile(live.certFile, 'not a certificate')
      service.child.kill('SIGHUP')
      await waitForLines(service, 'TLS certificate not reloaded', 2)
      expect((await overHttp1(service.url, '/health', first.cert)).status).toBe(200)
    } finally {
      expect(await service.stop()).toBe(0)
    }
  })

  it('R5.7.5 WORKERS=2: the primary passes SIGHUP on to every worker', async () => {
    const service = await start({ WORKERS: '2' })
    try {
      await install(renewed)
      service.child.kill('SIGHUP')
      await waitForLines(service, 'TLS certificate reloaded', 2)
      // new connections are dealt to the workers in turn: every one of them serves the renewed certificate
      for (let i = 0; i < 6; i++) expect(await servedFingerprint(service.url)).toBe(renewed.fingerprint256)
      expect(service.child.exitCode).toBeNull()
    } finally {
      expect(await service.stop()).toBe(0)
    }
  })

  it.each([
    [
      { TLS_CERT_FILE: 'missing.pem', TLS_KEY_FILE: 'missing.pem' },
      /^tessera: TLS_CERT_FILE cannot be read: ENOENT/,
    ],
    [
      { TLS_CERT_FILE: 'first-cert.pem', TLS_KEY_FILE: 'renewed-key.pem' },
      /^tessera: TLS_KEY_FILE does not hold/,
    ],
    [
      { TLS_CERT_FILE: 'first-key.pem', TLS_KEY_FILE: 'first-key.pem' },
      /^tessera: TLS_CERT_FILE does not hold/,
    ],
  ])('R5.7.4 TLS files that cannot be used stop the start: %j', async (files, message) => {
    const env = Object.fromEntries(Object.entries(files).map(([name, file]) => [name, join(dir, file)]))
    for (const workers of ['1', '2']) {
      const result = await runCli(['serve'], { DATA_DIR: join(dir, 'data-bad'), WORKERS: workers, ...env })
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(result.stderr).toMatch(message)
    }
  })
})

describe('R5.7.1 production without TLS files', () => {
  const production = { NODE_ENV: 'production', AUTH_JWT_SECRET: STRONG_SECRET }

  it('R5.7.1 refuses to start on a non-loopback address without TRUST_PROXY: one line naming the variables', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-https-'))
    try {
      const result = await runCli(['serve'], { ...production, HOST: '0.0.0.0', DATA_DIR: dir })
      expect(result).toMatchObject({
        code: 1,
        stdout: '',
        stderr:
          'tessera: TLS_CERT_FILE and TLS_KEY_FILE must be set in production, unless TRUST_PROXY names the proxy that ends TLS or HOST is a loopback address\n',
      })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('R5.7.1 operator commands apply no HTTPS rule: they open no port (migrate, users, audit)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-https-'))
    try {
      const env = {
        ...production,
        HOST: '0.0.0.0',
        DATA_DIR: dir,
        DATABASE_URL: `sqlite:${join(dir, 'app.db')}`,
      }
      expect(await runCli(['migrate'], env)).toMatchObject({ code: 0, stderr: '' })
      expect(await runCli(['users', 'list', '--json'], env)).toMatchObject({
        code: 0,
        stdout: '{"users":[],"next_after":null}\n',
        stderr: '',
      })
      expect(await runCli(['users', 'show', 'ada@example.com'], env)).toMatchObject({
        code: 1,
        stderr: 'tessera users: no account has the e-mail ada@example.com\n',
      })
      expect(await runCli(['audit', '--user', '4817203951'], env)).toMatchObject({
        code: 1,
        stderr: 'tessera audit: no account and no audit event has the user id 4817203951\n',
      })
      // the service itself still refuses
      expect((await runCli(['serve'], env)).stderr).toMatch(
        /^tessera: TLS_CERT_FILE and TLS_KEY_FILE must be set/,
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it.each([
    { HOST: '127.0.0.1' },
    { HOST: '127.8.9.10' },
    { HOST: '::1' },
    { HOST: 'localhost' },
    { HOST: '0.0.0.0', TRUST_PROXY: '10.0.0.0/8' },
    { HOST: '0.0.0.0', TLS_CERT_FILE: 'cert.pem', TLS_KEY_FILE: 'key.pem' },
  ])('R5.7.1 starts with %j', (env) => {
    expect(() => loadConfig({ ...production, ...env })).not.toThrow()
  })

  it.each([{ HOST: '0.0.0.0' }, { HOST: '::' }, { HOST: '10.1.2.3' }, { HOST: 'tessera.internal' }])(
    'R5.7.1 does not start with %j',
    (env) => {
      expect(() => loadConfig({ ...production, ...env })).toThrow(
        /^TLS_CERT_FILE and TLS_KEY_FILE must be set/,
      )
    },
  )
})

describe('R5.7.2 production behind TRUST_PROXY: requests with credentials must have come over HTTPS', () => {
  let service: TestService
  let tokens: { access: string; refresh: string }
  const viaProxy = (proto?: string) => ({
    'x-forwarded-for': '203.0.113.7',
    ...(proto === undefined ? {} : { 'x-forwarded-proto': proto }),
  })
  beforeAll(async () => {
    service = await startTestService(backends[0]!, {
      env: { NODE_ENV: 'production', HOST: '0.0.0.0', TRUST_PROXY: '127.0.0.1' },
    })
    const email = uniqueEmail()
    const registered = await call(service.app, 'POST', '/auth/register', {
      headers: viaProxy('https'),
      body: { email, password: PASSWORD },
    })
    expect(registered.status, registered.text).toBe(200)
    tokens = { access: registered.body.data.access_token, refresh: registered.body.data.refresh_token }
  })
  afterAll(() => service?.close())

  const requests = () =>
    [
      ['POST', '/auth/register', { body: { email: uniqueEmail(), password: PASSWORD } }],
      ['POST', '/auth/login', { body: { email: uniqueEmail(), password: PASSWORD } }],
      ['POST', '/auth/refresh', { body: { refresh_token: tokens.refresh } }],
      ['POST', '/auth/delete-refresh-token', { headers: { authorization: `Bearer ${tokens.access}` } }],
      ['GET', '/auth/me', { headers: { authorization: `Bearer ${tokens.access}` } }],
    ] as const

  it.each([
    ['no X-Forwarded-Proto', undefined],
    ['X-Forwarded-Proto: http', 'http'],
    ['X-Forwarded-Proto: https, http (the last proxy spoke HTTP)', 'https, http'],
  ])(
    'R5.7.2 %s: 403 "HTTPS is required" on register, login, refresh, logout and me',
    async (_name, proto) => {
      for (const [method, url, options] of requests()) {
        const reply = await call(service.app, method, url, {
          ...options,
          headers: { ...viaProxy(proto), ...('headers' in options ? options.headers : {}) },
        })
        expectError(reply, 403, 'HTTPS is required')
        expect(reply.headers['cache-control']).toBe('no-store')
      }
      // nothing was done: the refresh token still works
      const refreshed = await call(service.app, 'POST', '/auth/refresh', {
        headers: viaProxy('https'),
        body: { refresh_token: tokens.refresh },
      })
      expect(refreshed.status).toBe(200)
      tokens = { access: refreshed.body.data.access_token, refresh: refreshed.body.data.refresh_token }
    },
  )

  it('R5.7.2 X-Forwarded-Proto: https from a peer that is not in TRUST_PROXY counts for nothing', async () => {
    const reply = await service.app.inject({
      method: 'GET',
      url: '/auth/me',
      remoteAddress: '192.0.2.1',
      headers: { ...viaProxy('https'), authorization: `Bearer ${tokens.access}` },
    })
    expect(reply.statusCode).toBe(403)
  })

  it('R5.7.2 with X-Forwarded-Proto: https from the proxy every endpoint answers as usual; public status endpoints need nothing', async () => {
    const me = await call(service.app, 'GET', '/auth/me', {
      headers: { ...viaProxy('HTTPS'), authorization: `Bearer ${tokens.access}` },
    })
    expect(me.status).toBe(200)
    expect(me.headers['strict-transport-security']).toBe('max-age=31536000')
    expect((await call(service.app, 'GET', '/health', { headers: viaProxy() })).status).toBe(200)
  })
})
