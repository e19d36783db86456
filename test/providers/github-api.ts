import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TestCertificate } from '../support/certificates.js'

/** A GitHub user as the API shows it: `/user` and `/user/emails`. */
export interface GitHubUser {
  id: number
  login: string
  name: string | null
  avatar_url: string | null
  /** The public address; null when the user keeps it private. */
  email: string | null
  emails: Array<{ email: string; primary: boolean; verified: boolean; visibility?: string | null }>
}

export interface GitHubApi {
  /** `https://127.0.0.1:<port>`: OAUTH_GITHUB_URL. */
  readonly url: string
  /** `<url>/api`: OAUTH_GITHUB_API_URL. */
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
  /** The user the next authorizations sign in. */
  setUser(user: GitHubUser): void
  /** Token requests refused so far, with why (a wrong secret, verifier or redirect URI). */
  readonly refusals: readonly string[]
  stop(): Promise<void>
}

/**
 * A GitHub-shaped server over HTTPS: /login/oauth/authorize (redirects straight back with a code and the state, as
 * GitHub does for an app the user authorized before), /login/oauth/access_token (checks the client's secret, the
 * redirect URI and the PKCE verifier, answers JSON as GitHub does to `Accept: application/json`, and its errors with
 * a 200), /api/user and /api/user/emails.
 */
export async function startGitHubApi(certificate: TestCertificate): Promise<GitHubApi> {
  const clientId = 'Iv1.test-client'
  const clientSecret = randomBytes(20).toString('hex')
  const codes = new Map<string, { challenge: string; redirectUri: string; user: GitHubUser }>()
  const tokens = new Map<string, GitHubUser>()
  const refusals: string[] = []
  let user: GitHubUser | null = null

  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
    response.end(JSON.stringify(body))
  }
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'https://github.test')
    if (request.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const redirectUri = url.searchParams.get('redirect_uri') ?? ''
      if (
        url.searchParams.get('client_id') !== clientId ||
        url.searchParams.get('code_challenge_method') !== 'S256' ||
        user === null
      )
        return json(response, 400, { error: 'bad request' })
      const code = randomBytes(10).toString('hex')
      codes.set(code, { challenge: url.searchParams.get('code_challenge') ?? '', redirectUri, user })
      const back = new URL(redirectUri)
      back.searchParams.set('code', code)
      back.searchParams.set('state', url.searchParams.get('state') ?? '')
      response.writeHead(302, { location: back.href })
      return response.end()
    }
    if (request.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
      const grant = codes.get(form.get('code') ?? '')
      codes.delete(form.get('code') ?? '')
      const verifier = form.get('code_verifier') ?? ''
      const refusal =
        form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret
          ? 'client secret'
          : grant === undefined
            ? 'code'
            : createHash('sha256').update(verifier).digest('base64url') !== grant.challenge
              ? 'code verifier'
              : form.get('redirect_uri') !== grant.redirectUri
                ? 'redirect uri'
                : null
      if (refusal !== null || grant === undefined) {
        refusals.push(refusal ?? 'code')
        return json(response, 200, { error: 'bad_verification_code', error_description: refusal })
      }
      const token = `gho_${randomBytes(16).toString('hex')}`
      tokens.set(token, grant.user)
      return json(response, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' })
    }
    const owner = tokens.get((request.headers.authorization ?? '').replace(/^Bearer /, ''))
    if (owner === undefined) return json(response, 401, { message: 'Bad credentials' })
    const { emails, ...profile } = owner
    if (url.pathname === '/api/user') return json(response, 200, profile)
    if (url.pathname === '/api/user/emails') return json(response, 200, emails)
    return json(response, 404, { message: 'Not Found' })
  }

  const server = createServer(
    { cert: certificate.cert, key: await readFile(certificate.keyFile) },
    (request, response) => {
      handle(request, response).catch((error: unknown) => json(response, 500, { message: String(error) }))
    },
  )
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    apiUrl: `${url}/api`,
    clientId,
    clientSecret,
    setUser(next) {
      user = structuredClone(next)
    },
    refusals,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await closed
    },
  }
}
