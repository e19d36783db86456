import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { accessTokenPlugin, ConfigError, createAccessTokenVerifier } from '../../src/index.js'
import { TEST_SECRET } from '../support/test-service.js'
import { expectServiceRefuses, type MintedTokens, mintTokens, REFUSALS } from './minted-tokens.js'

/** How many times an `/orders` route ran. */
let ordersServed = 0

/** An application's own API: `/orders` protected by the plugin in a child scope, `/status` public beside it. */
async function ordersApi(register: (api: FastifyInstance) => PromiseLike<unknown>): Promise<FastifyInstance> {
  const app = Fastify()
  app.get('/status', async () => ({ up: true }))
  app.register(async (api) => {
    // declared before the plugin: Fastify gives a route the hooks of its whole scope
    api.get('/early', async (request) => ({ owner: request.userId }))
    await register(api)
    api.get('/orders', async (request) => {
      ordersServed += 1
      return { orders: [], owner: request.userId }
    })
  })
  await app.ready()
  return app
}

describe('accessTokenPlugin, in a Fastify application, against tokens of a running service', () => {
  let tokens: MintedTokens
  let app: FastifyInstance
  beforeAll(async () => {
    tokens = await mintTokens()
    app = await ordersApi((api) =>
      api.register(accessTokenPlugin, { secret: TEST_SECRET, clock: tokens.clock }),
    )
  })
  afterAll(async () => {
    await app.close()
    await tokens.close()
  })

  const orders = (authorization: string | undefined) =>
    app.inject({
      method: 'GET',
      url: '/orders',
      headers: authorization === undefined ? {} : { authorization },
    })

  it('R5.9.4 a valid access token reaches the route with the user id on request.userId', async () => {
    const reply = await orders(`Bearer ${tokens.user.accessToken}`)
    expect(reply.statusCode, reply.body).toBe(200)
    expect(reply.json()).toEqual({ orders: [], owner: tokens.user.id })
  })

  it.each(REFUSALS.map((refusal) => [refusal.name, refusal] as const))(
    'R5.9.4 %s: the service’s own 401, envelope and challenge, and the route does not run',
    async (_name, refusal) => {
      await expectServiceRefuses(tokens, refusal)
      const served = ordersServed
      const reply = await orders(refusal.authorization(tokens))
      expect(ordersServed).toBe(served)
      expect(reply.statusCode).toBe(401)
      expect(reply.headers['content-type']).toMatch(/^application\/json/)
      expect(reply.headers['www-authenticate']).toBe(refusal.challenge)
      expect(reply.json()).toEqual({ code: 401, message: refusal.message, data: null })
    },
  )

  it('R5.9.4 a refusal is written in the language of the request, as the service writes it (R1.16, R1.17)', async () => {
    const reply = await app.inject({ method: 'GET', url: '/orders', headers: { 'accept-language': 'zh' } })
    expect(reply.statusCode).toBe(401)
    expect(reply.headers['content-language']).toBe('zh-CN')
    expect(reply.headers.vary).toBe('Accept-Language')
    expect(reply.json()).toEqual({ code: 401, message: '缺少 Authorization 请求头', data: null })
  })

  it('R5.9.4 it guards every route of the scope that registers it, and none outside', async () => {
    expect((await app.inject({ method: 'GET', url: '/status' })).statusCode).toBe(200)
    const early = await app.inject({ method: 'GET', url: '/early' })
    expect(early.statusCode).toBe(401)
    const authorized = await app.inject({
      method: 'GET',
      url: '/early',
      headers: { authorization: `Bearer ${tokens.user.accessToken}` },
    })
    expect(authorized.json()).toEqual({ owner: tokens.user.id })
  })

  it('R5.9.4 takes a verifier made beforehand (one for several scopes)', async () => {
    const verifier = createAccessTokenVerifier({ secret: TEST_SECRET, clock: tokens.clock })
    const shared = await ordersApi((api) => api.register(accessTokenPlugin, { verifier }))
    try {
      const reply = await shared.inject({
        method: 'GET',
        url: '/orders',
        headers: { authorization: `Bearer ${tokens.user.accessToken}` },
      })
      expect(reply.json()).toEqual({ orders: [], owner: tokens.user.id })
    } finally {
      await shared.close()
    }
  })

  it('R5.9.3 a weak secret stops the application at start, naming the option', async () => {
    const started = ordersApi((api) => api.register(accessTokenPlugin, { secret: 'changeme' }))
    await expect(started).rejects.toBeInstanceOf(ConfigError)
    await expect(started).rejects.toThrow('secret must have at least 32 characters, 10 of them distinct')
  })
})
