import type { FastifyPluginCallback } from 'fastify'
import { AppError } from '../errors.js'
import { languageOf, markLanguage } from '../http/answer-language.js'
import { failure } from '../http/envelope.js'
import type { AccessTokenVerifier } from './access-token-verifier.js'
import { type AccessTokenGuardOptions, guardVerifier, settle } from './guard-options.js'
import type { RemoteAccessTokenVerifier } from './remote-access-token-verifier.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated user's id (claim `sub`); set on the routes a Tessera access-token guard protects. */
    userId: string
    /** The authenticated user's role (claim `role`; `user` when the token carries none); set with `userId`. */
    userRole: string
  }
}

/**
 * A Fastify plugin that protects every route of the scope it is registered in with Tessera's access tokens: the
 * checks of spec 5.2 on each request (an onRequest hook), the user id on `request.userId` and its role on `request.userRole`, and a refusal answered
 * as the service answers it (401, its envelope and message, `WWW-Authenticate`). Register it in a child scope that
 * holds the protected routes (it does not encapsulate itself, like a plugin wrapped by fastify-plugin, so the hook
 * applies to that scope, not only inside the plugin).
 */
export const accessTokenPlugin: FastifyPluginCallback<AccessTokenGuardOptions> = Object.assign(
  ((instance, options, done) => {
    let verifier: AccessTokenVerifier | RemoteAccessTokenVerifier
    try {
      verifier = guardVerifier(options)
    } catch (error) {
      // a weak secret or a bad lifetime: the registration fails, and with it the application's start
      done(error as Error)
      return
    }
    if (!instance.hasRequestDecorator('userId')) instance.decorateRequest('userId', '')
    if (!instance.hasRequestDecorator('userRole')) instance.decorateRequest('userRole', '')
    // a callback hook, like the service's own guard: with a secret the checks are synchronous
    instance.addHook('onRequest', (request, reply, next) => {
      settle(
        verifier,
        request.headers.authorization,
        (access) => {
          request.userId = access.userId
          request.userRole = access.role
          next()
        },
        (error) => {
          if (!(error instanceof AppError)) return next(error as Error)
          // in the request's language, as the service answers (docs/api.md §1.5)
          const language = languageOf(request.headers)
          markLanguage(reply.code(error.statusCode).headers(error.headers), language).send(
            failure(error, language),
          )
        },
      )
    })
    done()
  }) satisfies FastifyPluginCallback<AccessTokenGuardOptions>,
  {
    // what fastify-plugin sets, without the dependency: the hook belongs to the scope that registers the plugin
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'tessera-access-token',
  },
)
