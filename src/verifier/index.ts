// The verifier of Tessera's access tokens for the application's own services, and its Fastify and Express guards.
export {
  type AccessTokenRejection,
  type AccessTokenVerifier,
  type AccessTokenVerifierOptions,
  createAccessTokenVerifier,
  type VerifiedAccess,
} from './access-token-verifier.js'
export {
  type AccessTokenMiddleware,
  type AuthenticatedRequest,
  createAccessTokenMiddleware,
} from './express-middleware.js'
export { accessTokenPlugin } from './fastify-plugin.js'
export type { AccessTokenGuardOptions } from './guard-options.js'
export type {
  RemoteAccessTokenVerifier,
  RemoteAccessTokenVerifierOptions,
} from './remote-access-token-verifier.js'
