import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'

export interface Reply {
  status: number
  headers: Record<string, string | string[] | number | undefined>
  body: any
  text: string
}

export interface Call {
  headers?: Record<string, string>
  /** Sent as JSON unless a string (sent as is). */
  body?: unknown
  query?: Record<string, string>
}

/** app.inject with JSON in and out. */
export async function call(
  app: FastifyInstance,
  method: string,
  url: string,
  options: Call = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers }
  let payload: string | undefined
  if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const response = await app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(payload === undefined ? {} : { payload }),
    ...(options.query ? { query: options.query } : {}),
  })
  let body: unknown
  try {
    body = response.json()
  } catch {
    body = undefined
  }
  return { status: response.statusCode, headers: response.headers, body, text: response.body }
}

export const uniqueEmail = (): string => `user-${randomUUID()}@example.com`
export const PASSWORD = 'correct horse battery'

/**
 * The fields of an account registered with an e-mail and a password, before anything about it changed (docs/api.md
 * §2.1): what every answer that shows such an account holds beside its id, e-mail and times.
 */
export const NEW_ACCOUNT_FIELDS = {
  email_verified: false,
  username: null,
  nickname: null,
  avatar_url: null,
  bio: null,
  role: 'user',
  status: 'active',
  password_set: true,
  providers: [],
} as const

export interface Registered {
  email: string
  password: string
  id: string
  createdAt: string
  accessToken: string
  refreshToken: string
}

/** Registers a fresh account and looks up its id by logging in. */
export async function registerUser(
  app: FastifyInstance,
  email = uniqueEmail(),
  password = PASSWORD,
): Promise<Registered> {
  const registered = await call(app, 'POST', '/auth/register', { body: { email, password } })
  expect(registered.status, registered.text).toBe(200)
  const loggedIn = await call(app, 'POST', '/auth/login', { body: { email, password } })
  expect(loggedIn.status, loggedIn.text).toBe(200)
  return {
    email: loggedIn.body.data.email,
    password,
    id: loggedIn.body.data.id,
    createdAt: loggedIn.body.data.created_at,
    accessToken: loggedIn.body.data.access_token,
    refreshToken: loggedIn.body.data.refresh_token,
  }
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

/** The header and claims of a JWT, unverified. */
export function decodeJwt(token: string): { header: Record<string, unknown>; claims: Record<string, any> } {
  const [header = '', claims = ''] = token.split('.')
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')),
    claims: JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')),
  }
}

/** The exact error envelope of DECISIONS. */
export function expectError(reply: Reply, status: number, message: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.headers['content-type']).toMatch(/^application\/json/)
  expect(reply.body).toEqual({ code: status, message, data: null })
}
