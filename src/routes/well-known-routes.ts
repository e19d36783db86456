import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AccessTokenKeys, PublicJwk } from '../auth/access-token-keys.js'
import { publicBaseUrl } from '../config/server-config.js'
import type { Config } from '../config.js'
import { unforeseenFailure } from '../http/responses.js'

/** The discovery document of GET /.well-known/openid-configuration. */
export interface OpenIdConfiguration {
  issuer: string
  jwks_uri: string
  id_token_signing_alg_values_supported: string[]
}

export interface WellKnownRoutesOptions {
  /** The public keys that verify access tokens: none with HS256, whose secret is never published. */
  jwks: { keys: readonly PublicJwk[] }
  /** The discovery document, or null when the service knows no public URL (production without PUBLIC_URL). */
  discovery: OpenIdConfiguration | null
}

/**
 * How long a client may keep the JWKS and the discovery document: five minutes. A rotation publishes the next key
 * before it signs with it (docs/api.md R5.5.7), so a copy this old still holds every key that signs; and a verifier
 * that meets an unknown kid fetches the set again anyway.
 */
export const WELL_KNOWN_MAX_AGE_SECONDS = 300
const CACHE_CONTROL = `public, max-age=${WELL_KNOWN_MAX_AGE_SECONDS}`

/** The documents of `config` and its keys (null with HS256): what an application's other services discover. */
export function wellKnownDocuments(
  config: Pick<Config, 'env' | 'server' | 'http' | 'signing'>,
  keys: Pick<AccessTokenKeys, 'jwks'> | null,
): WellKnownRoutesOptions {
  const publicUrl = publicBaseUrl(config)
  return {
    jwks: keys?.jwks ?? { keys: [] },
    discovery:
      publicUrl === null
        ? null
        : {
            issuer: config.signing.issuer ?? publicUrl,
            jwks_uri: `${publicUrl}/.well-known/jwks.json`,
            id_token_signing_alg_values_supported: [config.signing.algorithm],
          },
  }
}

const Base64url = (description: string) => Type.String({ pattern: '^[A-Za-z0-9_-]+$', description })

const JwksResponse = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          kty: Type.Union([Type.Literal('OKP'), Type.Literal('EC')]),
          crv: Type.Union([Type.Literal('Ed25519'), Type.Literal('P-256')]),
          x: Base64url('the public key (OKP), or its x coordinate (EC)'),
          y: Type.Optional(Base64url('the y coordinate (EC keys only)')),
          kid: Base64url('the RFC 7638 thumbprint of the key: the `kid` of the access tokens it signed'),
          alg: Type.Union([Type.Literal('EdDSA'), Type.Literal('ES256')]),
          use: Type.Literal('sig'),
        },
        { additionalProperties: false },
      ),
      { description: 'the signing key first, then each previous key still accepted; empty with HS256' },
    ),
  },
  { additionalProperties: false },
)

const OpenIdConfigurationResponse = Type.Object({
  issuer: Type.String({ description: 'AUTH_JWT_ISSUER, or PUBLIC_URL when it is unset' }),
  jwks_uri: Type.String({ description: 'the absolute URL of GET /.well-known/jwks.json' }),
  id_token_signing_alg_values_supported: Type.Array(
    Type.Union([Type.Literal('HS256'), Type.Literal('EdDSA'), Type.Literal('ES256')]),
    { minItems: 1, maxItems: 1, description: 'AUTH_JWT_ALGORITHM, the algorithm of the access tokens' },
  ),
})

const CACHE_HEADERS = {
  'Cache-Control': {
    type: 'string',
    const: CACHE_CONTROL,
    description: 'Public, kept for five minutes (R4.13.3)',
  },
}

/** A success as the other routes document it (http/responses.ts): its schema, description and headers. */
const answer = <T extends object>(schema: T, description: string) => ({
  ...schema,
  'x-response-description': description,
  headers: CACHE_HEADERS,
})

/**
 * docs/api.md §4.13: the JWKS and the discovery document, public plain JSON without the envelope (like /health),
 * built at start: they change only with the configuration.
 */
export const wellKnownRoutes: FastifyPluginAsyncTypebox<WellKnownRoutesOptions> = async (app, options) => {
  const { jwks, discovery } = options

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getJwks',
        tags: ['auth'],
        summary: 'The public keys that verify access tokens (JWKS)',
        description:
          'The public keys of AUTH_JWT_ALGORITHM EdDSA or ES256 (RFC 7517): the signing key and every previous key still accepted, each with the kid the access tokens it signed carry. With HS256 (the default) the set is empty: the secret that verifies those tokens is never published.',
        security: [],
        response: {
          200: answer(JwksResponse, 'The key set (R4.13.1)'),
          500: unforeseenFailure(),
        },
      },
    },
    async (_request, reply) => reply.header('cache-control', CACHE_CONTROL).send(jwks),
  )

  if (discovery === null) return
  app.get(
    '/.well-known/openid-configuration',
    {
      schema: {
        operationId: 'getOpenIdConfiguration',
        tags: ['auth'],
        summary: 'Where the access-token keys are: a minimal discovery document',
        description:
          'The issuer, the absolute URL of the JWKS (from PUBLIC_URL, never from the request) and the algorithm of the access tokens, for libraries and gateways that find the keys through OpenID Connect discovery. Tessera issues no ID tokens and has no authorization endpoint: the document names the keys, nothing more. Not served in production without PUBLIC_URL.',
        security: [],
        response: {
          200: answer(OpenIdConfigurationResponse, 'The discovery document (R4.13.2)'),
          500: unforeseenFailure(),
        },
      },
    },
    async (_request, reply) => reply.header('cache-control', CACHE_CONTROL).send(discovery),
  )
}
