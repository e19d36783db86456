import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/http.js'
import { type Mailbox, smtpMailbox } from '../support/mailbox.js'
import { type ServiceWithProvider, startServiceWithProvider } from '../support/provider-service.js'
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js'
import { useTempDir } from '../support/temp-dir.js'
import { TestBrowser } from '../support/test-browser.js'
import { type GitHubApi, type GitHubUser, startGitHubApi } from './github-api.js'
import { api, EMAIL_UNVERIFIED, expectFailed, expectSignedIn, popupSignIn } from './provider-harness.js'

// docs/api.md §4.24 with `github`: OAuth 2.0 with PKCE and GitHub's REST API (a GitHub-shaped server of the test over
// HTTPS, as for a GitHub Enterprise Server: OAUTH_GITHUB_URL, OAUTH_GITHUB_API_URL), the service as a child process.
// The address is the primary entry of /user/emails, vouched for only when GitHub verified it.

describe('sign-in with GitHub', () => {
  const temp = useTempDir('github-sign-in')
  let smtp: TestSmtpServer
  let mailbox: Mailbox
  let service: ServiceWithProvider<GitHubApi>

  let ids = 1000
  /** A GitHub user with a fresh id whose primary address is `email`. */
  const gitHubUser = (email: string, verified: boolean, overrides: Partial<GitHubUser> = {}): GitHubUser => {
    const id = ++ids
    return {
      id,
      login: `octo-${id}`,
      name: null,
      avatar_url: null,
      email: null,
      emails: [{ email, primary: true, verified, visibility: 'private' }],
      ...overrides,
    }
  }
  const signIn = () => popupSignIn(new TestBrowser({ ca: service.ca }), service, 'github')

  beforeAll(async () => {
    smtp = await startSmtpServer()
    mailbox = smtpMailbox(smtp)
    service = await startServiceWithProvider(
      temp.path,
      async (certificate) => {
        const github = await startGitHubApi(certificate)
        return {
          provider: github,
          env: {
            OAUTH_PROVIDERS: 'github',
            OAUTH_GITHUB_URL: github.url,
            OAUTH_GITHUB_API_URL: github.apiUrl,
            OAUTH_GITHUB_CLIENT_ID: github.clientId,
            OAUTH_GITHUB_CLIENT_SECRET: github.clientSecret,
          },
        }
      },
      { SMTP_URL: smtp.url },
    )
  })
  afterAll(async () => {
    await service?.stop()
    await mailbox?.close()
    await smtp?.stop()
  })

  it('signs in with a private address, the verified primary entry of /user/emails, and again to the same account', async () => {
    const email = uniqueEmail()
    const user = gitHubUser(email, true, { name: 'The Octocat' })
    service.provider.setUser(user)
    const data = expectSignedIn((await signIn()).result, 'github', service.origin)
    expect(data).toMatchObject({
      email,
      email_verified: true,
      nickname: 'The Octocat',
      password_set: false,
      providers: ['github'],
    })
    service.provider.setUser({ ...user, emails: [{ email: uniqueEmail(), primary: true, verified: true }] })
    expect(expectSignedIn((await signIn()).result, 'github', service.origin).id).toBe(data.id)
    // the token requests carried the client's secret, the redirect URI and the PKCE verifier
    expect(service.provider.refusals).toEqual([])
  })

  it("links by a private verified address, and never takes /user's public address as verified", async () => {
    const email = uniqueEmail()
    await api(service, 'POST', '/auth/email/send-code', { body: { email, purpose: 'register' } })
    const code = /\b(\d{6})\b/.exec((await mailbox.next(email)).text)?.[1]
    const owner = await api(service, 'POST', '/auth/register', {
      body: { email, password: PASSWORD, verification_code: code },
    })
    expect(owner.body.data.email_verified).toBe(true)

    // the address only as /user's public one, the primary entry another, unverified one: no link
    service.provider.setUser(gitHubUser(uniqueEmail(), false, { email }))
    expect(expectSignedIn((await signIn()).result, 'github', service.origin)).toMatchObject({
      email_verified: false,
    })

    service.provider.setUser(gitHubUser(email, true))
    const data = expectSignedIn((await signIn()).result, 'github', service.origin)
    expect(data).toMatchObject({ id: owner.body.data.id, providers: ['github'], password_set: true })
    expect((await mailbox.next(email)).subject).toBe('A sign-in provider was linked to your Tessera account')
  })

  it('refuses an unverified primary address that an account has, even beside a verified entry', async () => {
    const registered = await api(service, 'POST', '/auth/register', {
      body: { email: uniqueEmail(), password: PASSWORD },
    })
    const email = registered.body.data.email
    const user = gitHubUser(email, false)
    user.emails.push({ email: uniqueEmail(), primary: false, verified: true })
    service.provider.setUser(user)
    expectFailed((await signIn()).result, 'github', EMAIL_UNVERIFIED)
    const login = await api(service, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
    expect(login.status).toBe(200)
    expect(login.body.data).toMatchObject({ providers: [], password_set: true })
  })

  it('creates an unverified account for an unverified primary address that no account has', async () => {
    const email = uniqueEmail()
    service.provider.setUser(gitHubUser(email, false))
    const data = expectSignedIn((await signIn()).result, 'github', service.origin)
    expect(data).toMatchObject({ email, email_verified: false, password_set: false, providers: ['github'] })
  })

  it('refuses a GitHub account without any primary address', async () => {
    service.provider.setUser(gitHubUser(uniqueEmail(), true, { emails: [], email: uniqueEmail() }))
    expectFailed((await signIn()).result, 'github', 'The provider did not share an e-mail address')
  })

  it('unlinks GitHub only from an account that has another way in', async () => {
    service.provider.setUser(gitHubUser(uniqueEmail(), true))
    const data = expectSignedIn((await signIn()).result, 'github', service.origin)
    expect((await api(service, 'DELETE', '/auth/oauth/github', { token: data.access_token })).status).toBe(
      409,
    )
    // a provider name that is not a name at all is refused before anything is looked up
    expect(
      (await api(service, 'DELETE', '/auth/oauth/Not%20A%20Name', { token: data.access_token })).status,
    ).toBe(400)
  })
})
