import { execFile } from 'node:child_process'
import { readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { PASSWORD, uniqueEmail } from '../support/http.js'
import { useTempDir } from '../support/temp-dir.js'
import { startTestService, type TestService } from '../support/test-service.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))

/**
 * A small program written against the types openapi-typescript generates from the document (./api.js), with
 * openapi-fetch: register → login → me → refresh → logout against the service at argv[2], asserting each step and
 * printing the steps as JSON. Its `@ts-expect-error`s fail the type check if the generated types stop checking a body,
 * or stop telling a sign-in's tokens from the challenge of a second factor (docs/api.md §4.25), which a user of the
 * client narrows away.
 */
const CLIENT_PROGRAM = `import assert from 'node:assert/strict'
import createClient from 'openapi-fetch'
import type { components, operations, paths } from './api.js'

type Account = operations['getCurrentUser']['responses'][200]['content']['application/json']['data']
type Envelope = components['schemas']['ErrorResponse']
/** A first factor's answer: the account and its tokens, or the challenge of a second factor (docs/api.md §4.25). */
type SignIn = operations['login']['responses'][200]['content']['application/json']['data']

const [baseUrl = '', email = '', password = ''] = process.argv.slice(2)
const client = createClient<paths>({ baseUrl })
const bearer = (token: string) => ({ authorization: \`Bearer \${token}\` })
const steps: Array<{ step: string; status: number }> = []

const registered = await client.POST('/auth/register', { body: { email, password } })
assert.ok(registered.data, 'register answered 200')
const code: 200 = registered.data.code
assert.equal(code, 200)
assert.equal(registered.data.data.email, email.trim().toLowerCase())
steps.push({ step: 'register', status: registered.response.status })

// @ts-expect-error the document types the password as a string
await client.POST('/auth/login', { body: { email, password: 12345678 } }).catch(() => undefined)
const login = await client.POST('/auth/login', { body: { email, password } })
assert.ok(login.data, 'login answered 200')
const signIn: SignIn = login.data.data
// @ts-expect-error a sign-in may answer the challenge of a second factor, which carries no tokens
signIn.access_token
// an account without a second factor is signed in at once; one with a factor would answer the challenge (§4.25)
assert.ok(!('mfa_required' in signIn), 'login answered the tokens, not a challenge')
const { id, access_token: access, refresh_token: refresh } = signIn
assert.match(id, /^[1-9][0-9]{9}$/)
steps.push({ step: 'login', status: login.response.status })

const me = await client.GET('/auth/me', { headers: bearer(access) })
assert.ok(me.data, 'me answered 200')
const account: Account = me.data.data
assert.deepEqual([account.id, account.email], [id, registered.data.data.email])
assert.ok(!Number.isNaN(Date.parse(account.created_at)))
steps.push({ step: 'me', status: me.response.status })

const refreshed = await client.POST('/auth/refresh', { body: { refresh_token: refresh } })
assert.ok(refreshed.data, 'refresh answered 200')
assert.notEqual(refreshed.data.data.refresh_token, refresh)
steps.push({ step: 'refresh', status: refreshed.response.status })

const reused = await client.POST('/auth/refresh', { body: { refresh_token: refresh } })
const refusal: Envelope | undefined = reused.error
assert.equal(reused.response.status, 401)
assert.equal(refusal?.message, 'Refresh token is invalid, expired or already used')
steps.push({ step: 'refresh again', status: reused.response.status })

const loggedOut = await client.POST('/auth/delete-refresh-token', { headers: bearer(refreshed.data.data.access_token) })
assert.ok(loggedOut.data, 'logout answered 200')
// the generated type says \`data: null\`; openapi-fetch's Readable<> drops a property typed null alone, so the body
// is compared whole
const nothing: operations['logout']['responses'][200]['content']['application/json']['data'] = null
assert.deepEqual(loggedOut.data, { code: 200, message: 'Success', data: nothing })
steps.push({ step: 'logout', status: loggedOut.response.status })

const afterLogout = await client.POST('/auth/refresh', { body: { refresh_token: refreshed.data.data.refresh_token } })
assert.equal(afterLogout.error?.code, 401)
steps.push({ step: 'refresh after logout', status: afterLogout.response.status })

process.stdout.write(JSON.stringify(steps))
`

// issue 13: a client generated from GET /openapi.json type-checks (strict) and completes the flow against a running
// service. The generated files live in a temporary directory, never in the repository.
describe('R4.9.8 a client generated from the API document with openapi-typescript and openapi-fetch', () => {
  const temp = useTempDir('generated-client')
  let service: TestService
  let baseUrl: string
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    const address = service.app.server.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    const document = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    baseUrl = `http://127.0.0.1:${address.port}${document.servers[0].url.replace(/\/$/, '')}`
    // the program's packages (openapi-fetch, @types/node) are the repository's
    await symlink(join(root, 'node_modules'), join(temp.path, 'node_modules'), 'dir')
    await writeFile(join(temp.path, 'package.json'), JSON.stringify({ type: 'module' }))
    await writeFile(join(temp.path, 'api.d.ts'), astToString(await openapiTS(document)))
    await writeFile(join(temp.path, 'flow.ts'), CLIENT_PROGRAM)
  })
  afterAll(() => service.close())

  it('generates types that name every operation by its operationId', async () => {
    const types = await readFile(join(temp.path, 'api.d.ts'), 'utf8')
    for (const operationId of [
      'register',
      'login',
      'refreshTokens',
      'logout',
      'getCurrentUser',
      'getHealth',
      'getInfo',
      'getSiteConfig',
      'getSiteConfigSchema',
      // issue 22: the profile, the avatar, and sign-in with providers
      'updateProfile',
      'uploadAvatar',
      'removeAvatar',
      'getAvatar',
      'listProviders',
      'startProviderSignIn',
      'finishProviderSignIn',
      'exchangeProviderCode',
      'unlinkProvider',
      // issue 32: second factors and passkeys
      'setUpTotp',
      'confirmTotp',
      'verifySecondFactor',
      'listFactors',
      'removeFactor',
      'newRecoveryCodes',
      'passkeyRegistrationOptions',
      'passkeyRegister',
      'passkeyLoginOptions',
      'passkeyLogin',
    ]) {
      expect(types).toMatch(new RegExp(`^    ${operationId}: \\{$`, 'm'))
    }
  })

  it('type-checks the program with tsc --strict', () => {
    const program = ts.createProgram([join(temp.path, 'flow.ts')], {
      strict: true,
      noUncheckedIndexedAccess: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      skipLibCheck: true,
      noEmit: true,
    })
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
    expect(problems).toEqual([])
  })

  it('completes register → login → me → refresh → logout against the listening service', async () => {
    const output = ts.transpileModule(CLIENT_PROGRAM, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    })
    await writeFile(join(temp.path, 'flow.js'), output.outputText)
    const { stdout } = await run(
      process.execPath,
      [join(temp.path, 'flow.js'), baseUrl, ` ${uniqueEmail()}`, PASSWORD],
      {
        timeout: 30_000,
      },
    )
    expect(JSON.parse(stdout)).toEqual([
      { step: 'register', status: 200 },
      { step: 'login', status: 200 },
      { step: 'me', status: 200 },
      { step: 'refresh', status: 200 },
      { step: 'refresh again', status: 401 },
      { step: 'logout', status: 200 },
      { step: 'refresh after logout', status: 401 },
    ])
  })
})
