import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type AccessTokenMiddleware,
  type AuthenticatedRequest,
  createAccessTokenMiddleware,
} from '../../src/index.js'
import { TEST_SECRET } from '../support/test-service.js'
import { expectServiceRefuses, type MintedTokens, mintTokens, REFUSALS } from './minted-tokens.js'

/**
 * A plain node:http server that runs `middleware` then a handler as Express does (Express is no dependency): the
 * handler answers with the user id, and `next(error)` with a 500.
 */
async function listen(middleware: AccessTokenMiddleware) {
  let handled = 0
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    middleware(req, res, (error) => {
      handled += 1
      res.writeHead(error === undefined ? 200 : 500, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify(
          error === undefined ? { owner: (req as AuthenticatedRequest).userId } : { error: String(error) },
        ),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    /** How many requests went on past the middleware (next was called). */
    handled: () => handled,
    get: (authorization: string | undefined, headers: Record<string, string> = {}) =>
      fetch(`http://127.0.0.1:${port}/orders`, {
        headers: { ...headers, ...(authorization === undefined ? {} : { authorization }) },
        signal: AbortSignal.timeout(10_000),
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

describe('createAccessTokenMiddleware on a node:http server, against tokens of a running service', () => {
  let tokens: MintedTokens
  let api: Awaited<ReturnType<typeof listen>>
  beforeAll(async () => {
    tokens = await mintTokens()
    api = await listen(createAccessTokenMiddleware({ secret: TEST_SECRET, clock: tokens.clock }))
  })
  afterAll(async () => {
    await api.close()
    await tokens.close()
  })

  it('R5.9.4 a valid access token calls next() with the user id on req.userId', async () => {
    const before = api.handled()
    const response = await api.get(`Bearer ${tokens.user.accessToken}`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ owner: tokens.user.id })
    expect(api.handled()).toBe(before + 1)
  })

  it.each(REFUSALS.map((refusal) => [refusal.name, refusal] as const))(
    'R5.9.4 %s: the service’s own 401, envelope and challenge, and next() is not called',
    async (_name, refusal) => {
      await expectServiceRefuses(tokens, refusal)
      const before = api.handled()
      const response = await api.get(refusal.authorization(tokens))
      expect(response.status).toBe(401)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(response.headers.get('www-authenticate')).toBe(refusal.challenge)
      expect(await response.json()).toEqual({ code: 401, message: refusal.message, data: null })
      expect(api.handled()).toBe(before)
    },
  )

  it('R5.9.4 a refusal is written in the language of the request, as the service writes it (R1.16, R1.17)', async () => {
    const response = await api.get(undefined, { 'accept-language': 'zh-CN, en;q=0.5' })
    expect(response.status).toBe(401)
    expect(response.headers.get('content-language')).toBe('zh-CN')
    expect(response.headers.get('vary')).toBe('Accept-Language')
    expect(await response.json()).toEqual({ code: 401, message: '缺少 Authorization 请求头', data: null })
    expect((await api.get(undefined)).headers.get('content-language')).toBe('en')
  })

  it('R5.9.4 an error that is no refusal goes to next(error), for the application’s error handler', async () => {
    const failing = await listen(
      createAccessTokenMiddleware({
        verifier: {
          verify: () => {
            throw new Error('the verifier broke')
          },
          verifyToken: () => ({ userId: 'never', role: 'user' }),
        },
      }),
    )
    try {
      const response = await failing.get(`Bearer ${tokens.user.accessToken}`)
      expect(response.status).toBe(500)
      expect(await response.json()).toEqual({ error: 'Error: the verifier broke' })
    } finally {
      await failing.close()
    }
  })

  it('R5.9.3 a weak secret is refused when the middleware is made', () => {
    expect(() => createAccessTokenMiddleware({ secret: 'changeme' })).toThrow(
      'secret must have at least 32 characters, 10 of them distinct',
    )
  })
})
