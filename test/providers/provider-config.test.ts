import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

// docs/api.md §4.24: OAUTH_PROVIDERS and its variables, FRONTEND_ORIGIN

const SECRET = 'a-production-secret-of-at-least-32-characters'
const GOOGLE = { OAUTH_GOOGLE_CLIENT_ID: 'google-id', OAUTH_GOOGLE_CLIENT_SECRET: 'google-secret' }

/** The ConfigError loadConfig throws for `env`: its variable and text. */
function refusal(env: Record<string, string>): { variable: string; message: string } {
  try {
    loadConfig(env)
  } catch (error) {
    if (error instanceof ConfigError) return { variable: error.variable, message: error.message }
    throw error
  }
  throw new Error('loadConfig accepted it')
}

describe('the provider configuration', () => {
  it('enables none by default, and posts to the origin of the public URL', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://auth.example.com/api' }).providers).toEqual({
      enabled: [],
      frontendOrigin: 'https://auth.example.com',
      publicBaseUrl: 'https://auth.example.com/api',
    })
  })

  it("reads google, github and any OpenID issuer, with google's and github's defaults", () => {
    const config = loadConfig({
      PUBLIC_URL: 'https://auth.example.com',
      FRONTEND_ORIGIN: 'https://App.Example.com:443',
      OAUTH_PROVIDERS: 'google, github,my-idp',
      ...GOOGLE,
      OAUTH_GITHUB_CLIENT_ID: 'gh-id',
      OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
      OAUTH_MY_IDP_ISSUER: 'https://idp.example.com/realms/main/',
      OAUTH_MY_IDP_CLIENT_ID: 'idp-id',
      OAUTH_MY_IDP_CLIENT_SECRET: 'idp-secret',
    })
    expect(config.providers).toEqual({
      enabled: [
        {
          kind: 'openid',
          name: 'google',
          issuer: 'https://accounts.google.com',
          clientId: 'google-id',
          clientSecret: 'google-secret',
        },
        {
          kind: 'github',
          name: 'github',
          webUrl: 'https://github.com',
          apiUrl: 'https://api.github.com',
          clientId: 'gh-id',
          clientSecret: 'gh-secret',
        },
        {
          kind: 'openid',
          name: 'my-idp',
          issuer: 'https://idp.example.com/realms/main',
          clientId: 'idp-id',
          clientSecret: 'idp-secret',
        },
      ],
      frontendOrigin: 'https://app.example.com',
      publicBaseUrl: 'https://auth.example.com',
    })
  })

  it("takes a GitHub Enterprise Server's API under /api/v3 of its URL", () => {
    const config = loadConfig({
      OAUTH_PROVIDERS: 'github',
      OAUTH_GITHUB_URL: 'https://git.example.com',
      OAUTH_GITHUB_CLIENT_ID: 'id',
      OAUTH_GITHUB_CLIENT_SECRET: 'secret',
    })
    expect(config.providers.enabled[0]).toMatchObject({
      webUrl: 'https://git.example.com',
      apiUrl: 'https://git.example.com/api/v3',
    })
  })

  it.each([
    [{ OAUTH_PROVIDERS: 'Google' }, 'OAUTH_PROVIDERS', 'must list provider names'],
    [{ OAUTH_PROVIDERS: 'google,google', ...GOOGLE }, 'OAUTH_PROVIDERS', 'lists "google" twice'],
    [{ OAUTH_PROVIDERS: 'a-b,a_b' }, 'OAUTH_PROVIDERS', 'whose variables are both OAUTH_A_B_*'],
    [{ OAUTH_PROVIDERS: 'exchange' }, 'OAUTH_PROVIDERS', 'a route of its own has that name'],
    [{ OAUTH_PROVIDERS: 'google' }, 'OAUTH_GOOGLE_CLIENT_ID', 'must be set: OAUTH_PROVIDERS lists google'],
    [
      { OAUTH_PROVIDERS: 'google', OAUTH_GOOGLE_CLIENT_ID: 'id' },
      'OAUTH_GOOGLE_CLIENT_SECRET',
      'must be set: OAUTH_PROVIDERS lists google',
    ],
    [
      { OAUTH_PROVIDERS: 'okta', OAUTH_OKTA_CLIENT_ID: 'id', OAUTH_OKTA_CLIENT_SECRET: 'secret' },
      'OAUTH_OKTA_ISSUER',
      'must be set',
    ],
    [
      { OAUTH_PROVIDERS: 'google', ...GOOGLE, OAUTH_GOOGLE_ISSUER: 'http://idp.example.com' },
      'OAUTH_GOOGLE_ISSUER',
      'https://',
    ],
    [{ FRONTEND_ORIGIN: 'https://app.example.com/' }, 'FRONTEND_ORIGIN', 'must be an origin'],
    [{ FRONTEND_ORIGIN: 'https://app.example.com/path' }, 'FRONTEND_ORIGIN', 'must be an origin'],
    [{ FRONTEND_ORIGIN: 'app.example.com' }, 'FRONTEND_ORIGIN', 'must be an origin'],
    [
      {
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        AUTH_JWT_SECRET: SECRET,
        OAUTH_PROVIDERS: 'google',
        ...GOOGLE,
      },
      'PUBLIC_URL',
      'must be set in production with OAUTH_PROVIDERS',
    ],
  ])('refuses %o, naming %s', (env, variable, text) => {
    const error = refusal(env as Record<string, string>)
    expect(error.variable).toBe(variable)
    expect(error.message).toContain(text)
  })
})
