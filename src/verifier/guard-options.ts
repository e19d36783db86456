import {
  type AccessTokenVerifier,
  type AccessTokenVerifierOptions,
  createAccessTokenVerifier,
} from './access-token-verifier.js'

/** The options of the Fastify plugin and the middleware: a verifier made beforehand, or the settings of a new one. */
export type AccessTokenGuardOptions = AccessTokenVerifierOptions | { verifier: AccessTokenVerifier }

/** The verifier a guard uses: the one it was given, or one made from the settings, once, when the guard is made. */
export function guardVerifier(options: AccessTokenGuardOptions): AccessTokenVerifier {
  return 'verifier' in options ? options.verifier : createAccessTokenVerifier(options)
}
