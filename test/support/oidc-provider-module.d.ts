// oidc-provider (a devDependency, started by test/support/oidc-provider.ts) ships no type declarations: the part
// of it the tests use, typed loosely.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    callback(): (request: IncomingMessage, response: ServerResponse) => void
    on(event: string, listener: (...args: unknown[]) => void): this
    interactionDetails(
      request: IncomingMessage,
      response: ServerResponse,
    ): Promise<{ uid: string; params: Record<string, unknown>; prompt: { name: string } }>
    interactionFinished(
      request: IncomingMessage,
      response: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>
    readonly Grant: new (properties: {
      accountId: string
      clientId: string
    }) => { addOIDCScope(scope: string): void; save(): Promise<string> }
  }
}
