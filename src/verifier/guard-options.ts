import {
  type AccessTokenVerifier,
  type AccessTokenVerifierOptions,
  createAccessTokenVerifier,
  type VerifiedAccess,
} from './access-token-verifier.js'
import {
  createRemoteAccessTokenVerifier,
  type RemoteAccessTokenVerifier,
  type RemoteAccessTokenVerifierOptions,
} from './remote-access-token-verifier.js'

/** The options of the Fastify plugin and the middleware: a verifier made beforehand, or the settings of a new one. */
export type AccessTokenGuardOptions =
  | AccessTokenVerifierOptions
  | RemoteAccessTokenVerifierOptions
  | { verifier: AccessTokenVerifier | RemoteAccessTokenVerifier }

/** The verifier a guard uses: the one it was given, or one made from the settings, once, when the guard is made. */
export function guardVerifier(
  options: AccessTokenGuardOptions,
): AccessTokenVerifier | RemoteAccessTokenVerifier {
  if ('verifier' in options) return options.verifier
  return 'jwksUrl' in options ? createRemoteAccessTokenVerifier(options) : createAccessTokenVerifier(options)
}

/**
 * Verifies `authorization` and calls `accept` with the user id and role, or `refuse` with why not (an AppError, the service's
 * 401, or any other error, such as a key set that could not be fetched): at once with a secret, whose checks are
 * synchronous (no promise per request), and once the keys are at hand with a key set.
 */
export function settle(
  verifier: AccessTokenVerifier | RemoteAccessTokenVerifier,
  authorization: string | undefined,
  accept: (access: VerifiedAccess) => void,
  refuse: (error: unknown) => void,
): void {
  let verified: ReturnType<(typeof verifier)['verify']>
  try {
    verified = verifier.verify(authorization)
  } catch (error) {
    refuse(error)
    return
  }
  if (verified instanceof Promise) verified.then(accept, refuse)
  else accept(verified)
}
