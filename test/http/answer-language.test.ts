import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pageResult } from '../providers/provider-harness.js'
import { backends } from '../support/backends.js'
import { bearer, call, PASSWORD, type Reply, registerUser, uniqueEmail } from '../support/http.js'
import { codeIn, type Mailbox, resetKeyIn, smtpMailbox } from '../support/mailbox.js'
import { exchange } from '../support/raw-http.js'
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js'
import { apiPath, startTestService, type TestService } from '../support/test-service.js'

// docs/api.md R1.16 to R1.18, src/http/answer-language.ts and the catalogues of messages/: every text a person reads
// (error envelopes, field problems, the sign-in pages, the mails) in Simplified Chinese when Accept-Language prefers
// it, English otherwise. The page that shows them is the front end's: what it shows is asserted here, whole.

const ZH = { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' }
/** The front end origin of the sign-in pages: PUBLIC_URL's (FRONTEND_ORIGIN by default). */
const PUBLIC_URL = 'http://127.0.0.1:9'

/** The fields of Vary, lower-cased. */
const varyOf = (reply: Reply) =>
  String(reply.headers.vary ?? '')
    .split(',')
    .map((field) => field.trim().toLowerCase())
    .filter((field) => field !== '')

/** An envelope in `language` (docs/api.md R1.17): Content-Language, and Vary naming Accept-Language. */
function expectWritten(
  reply: Reply,
  status: number,
  language: string,
  message: string,
  data: unknown = null,
) {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toEqual({ code: status, message, data })
  expect(reply.headers['content-language']).toBe(language)
  expect(varyOf(reply)).toContain('accept-language')
}

describe('the language of the answers', () => {
  let service: TestService
  let smtp: TestSmtpServer
  let mailbox: Mailbox
  let port: number

  beforeAll(async () => {
    smtp = await startSmtpServer()
    mailbox = smtpMailbox(smtp)
    service = await startTestService(backends[0]!, {
      env: {
        SMTP_URL: smtp.url,
        MAIL_RETRY_SECONDS: '1',
        EMAIL_CODE_RESEND_SECONDS: '60',
        // a provider whose pages are answered without reaching it: an unknown name, a start refused
        OAUTH_PROVIDERS: 'google',
        OAUTH_GOOGLE_CLIENT_ID: 'tessera-test',
        OAUTH_GOOGLE_CLIENT_SECRET: 'not-a-secret',
        PUBLIC_URL,
      },
    })
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    port = (service.app.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    await service?.close()
    await mailbox?.close()
    await smtp?.stop()
  })

  const get = (url: string, headers: Record<string, string> = {}) =>
    call(service.app, 'GET', url, { headers })
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    call(service.app, 'POST', url, { body, headers })

  it.each([
    [undefined, 'en'],
    ['en', 'en'],
    ['zh', 'zh-CN'],
    ['zh-CN', 'zh-CN'],
    ['zh-sg', 'zh-CN'],
    ['zh-Hans-CN', 'zh-CN'],
    ['zh-TW', 'en'],
    ['zh-HK, zh-Hant;q=0.9, zh;q=0.5', 'zh-CN'],
    ['zh-TW, en;q=0.5, zh-CN;q=0.4', 'en'],
    ['en;q=0.9, zh-Hans;q=0.95', 'zh-CN'],
    ['zh;q=0, en;q=0.1', 'en'],
    ['fr, zh-SG;q=0.3', 'zh-CN'],
    ['de, ja', 'en'],
  ])('R1.16 Accept-Language %j: an error in %s', async (header, language) => {
    const reply = await get('/auth/me', header === undefined ? {} : { 'accept-language': header })
    expectWritten(
      reply,
      401,
      language,
      language === 'en' ? 'Authorization header is missing' : '缺少 Authorization 请求头',
    )
    // the rest of the answer is the same in every language
    expect(reply.headers['www-authenticate']).toBe('Bearer')
    expect(reply.headers['cache-control']).toBe('no-store')
  })

  it('R1.16 a validation error names the field and its problem in Chinese, in message and data.errors', async () => {
    const email = await post('/auth/register', { email: 'nope', password: PASSWORD }, ZH)
    expectWritten(email, 400, 'zh-CN', '请求无效：/email 必须是有效的邮箱地址', {
      errors: [{ field: '/email', message: '必须是有效的邮箱地址' }],
    })
    const type = await post('/auth/register', { email: uniqueEmail(), password: 12345678 }, ZH)
    expectWritten(type, 400, 'zh-CN', '请求无效：/password 必须是字符串', {
      errors: [{ field: '/password', message: '必须是字符串' }],
    })
    const short = await post('/auth/register', { email: uniqueEmail(), password: 'short' }, ZH)
    expect(short.body.data.errors).toEqual([
      { field: '/password', message: '长度必须为 8 到 100 个字符，且为格式正确的 Unicode 文本' },
    ])
    const missing = await post('/auth/login', { password: PASSWORD }, ZH)
    expect(missing.body.message).toBe('请求无效：/email 为必填项')
    const body = await post('/auth/login', '[]', ZH)
    expectWritten(body, 400, 'zh-CN', '请求无效：请求体 必须是对象', {
      errors: [{ field: '', message: '必须是对象' }],
    })
    const tooLong = await post('/auth/refresh', { refresh_token: 'x'.repeat(4097) }, ZH)
    expect(tooLong.body.data.errors).toEqual([
      { field: '/refresh_token', message: '长度不能超过 4096 个字符' },
    ])
    const code = await post(
      '/auth/login/email-code',
      { email: uniqueEmail(), verification_code: '12345' },
      ZH,
    )
    expect(code.body.data.errors).toEqual([{ field: '/verification_code', message: '必须是 6 位数字' }])
    // a reset takes a reset key too, and says so
    const reset = await post(
      '/auth/password/reset',
      { email: uniqueEmail(), verification_code: '12345', new_password: PASSWORD },
      ZH,
    )
    expect(reset.body.data.errors).toEqual([
      { field: '/verification_code', message: '必须是 6 位数字的验证码或重置密钥' },
    ])
    const purpose = await post('/auth/email/send-code', { email: uniqueEmail(), purpose: 'nope' }, ZH)
    expect(purpose.body.data.errors).toEqual([{ field: '/purpose', message: '必须是允许的值之一' }])
    // the same request in English: the texts of docs/api.md
    const english = await post('/auth/register', { email: 'nope', password: PASSWORD })
    expectWritten(english, 400, 'en', 'Invalid request: /email must be a valid e-mail address', {
      errors: [{ field: '/email', message: 'must be a valid e-mail address' }],
    })
  })

  it("R1.16 the profile's refusals, from the service rather than the schema, in Chinese", async () => {
    const user = await registerUser(service.app)
    const spoofed = await call(service.app, 'PUT', '/auth/profile', {
      body: { nickname: 'admin\u202Egnp.exe', bio: 'fine' },
      headers: { ...ZH, ...bearer(user.accessToken) },
    })
    expectWritten(spoofed, 400, 'zh-CN', '请求无效：/nickname 不能包含不可见字符或改变文字方向的字符', {
      errors: [{ field: '/nickname', message: '不能包含不可见字符或改变文字方向的字符' }],
    })
    const username = await call(service.app, 'PUT', '/auth/profile', {
      body: { username: 'a!' },
      headers: { ...ZH, ...bearer(user.accessToken) },
    })
    expect(username.body.data.errors).toEqual([
      { field: '/username', message: '必须由 3 到 32 个 a-z、0-9、_、.、- 字符组成' },
    ])
  })

  it('R1.16 404, 405, a wrong password and a rate limit in Chinese, with their headers', async () => {
    expectWritten(await get('/nowhere', ZH), 404, 'zh-CN', '未找到')
    const method = await get('/auth/login', ZH)
    expectWritten(method, 405, 'zh-CN', '不支持该请求方法')
    expect(method.headers.allow).toBe('POST')
    const user = await registerUser(service.app)
    const wrong = await post('/auth/login', { email: user.email, password: 'not the password' }, ZH)
    expectWritten(wrong, 401, 'zh-CN', '邮箱或密码错误')
    const email = uniqueEmail()
    expect((await post('/auth/email/send-code', { email, purpose: 'login' }, ZH)).status).toBe(200)
    const again = await post('/auth/email/send-code', { email, purpose: 'login' }, ZH)
    expectWritten(again, 429, 'zh-CN', '请求过于频繁，请稍后再试')
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0)
  })

  it('R1.16 "Success" stays as the specification writes it, in an answer that carries no language', async () => {
    const registered = await post('/auth/register', { email: uniqueEmail(), password: PASSWORD }, ZH)
    expect(registered.status).toBe(200)
    expect(registered.body.message).toBe('Success')
    expect(registered.headers['content-language']).toBeUndefined()
    expect(varyOf(registered)).not.toContain('accept-language')
  })

  it("R1.17 Vary names Accept-Language beside CORS's Origin", async () => {
    const origin = 'https://app.example.com'
    for (const [headers, language] of [
      [{ ...ZH, origin }, 'zh-CN'],
      [{ origin }, 'en'],
    ] as const) {
      const reply = await get('/auth/me', headers)
      expect(reply.status).toBe(401)
      expect(reply.headers['access-control-allow-origin']).toBe(origin)
      expect(reply.headers['content-language']).toBe(language)
      expect(varyOf(reply).sort()).toEqual(['accept-language', 'origin'])
    }
  })

  /** One raw request to the listening service, and its answer: status, headers and the parsed body. */
  async function raw(request: string) {
    const text = Buffer.from(await exchange('127.0.0.1', port, request), 'latin1').toString('utf8')
    const [head = '', body = ''] = text.split('\r\n\r\n')
    const [statusLine = '', ...lines] = head.split('\r\n')
    const headers = Object.fromEntries(
      lines.map((line) => [
        line.slice(0, line.indexOf(':')).toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
    )
    return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) }
  }

  it('R1.17 a request refused before any route is answered in its language, but for the refusals of Node’s own parser', async () => {
    const health = apiPath('/health')
    const noHost = await raw(`GET ${health} HTTP/1.1\r\nAccept-Language: zh-CN\r\n\r\n`)
    expect(noHost.status).toBe(400)
    expect(noHost.body).toEqual({ code: 400, message: '请求错误', data: null })
    expect(noHost.headers['content-language']).toBe('zh-CN')
    expect(noHost.headers.vary).toBe('Accept-Language')
    const expectation = await raw(
      `GET ${health} HTTP/1.1\r\nHost: t\r\nAccept-Language: zh\r\nExpect: something-else\r\n\r\n`,
    )
    expect(expectation.body).toEqual({ code: 417, message: '无法满足 Expect 请求头的要求', data: null })
    const encoding = await raw(
      `GET ${apiPath('/auth/%zz')} HTTP/1.1\r\nHost: t\r\nAccept-Language: zh\r\nConnection: close\r\n\r\n`,
    )
    expect(encoding.body).toEqual({ code: 400, message: '请求错误', data: null })
    expect(encoding.headers['content-language']).toBe('zh-CN')
    // Node's parser refuses this one itself, with no request to read a header from: English, and no language header
    const parser = await raw(
      `POST ${apiPath('/auth/login')} HTTP/1.1\r\nHost: t\r\nAccept-Language: zh\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    )
    expect(parser.body).toEqual({ code: 400, message: 'Bad Request', data: null })
    expect(parser.headers['content-language']).toBeUndefined()
  })

  it('R1.16 the provider sign-in pages are written in Chinese: the page and the message it posts', async () => {
    const unknown = await get('/auth/oauth/wechat/start', ZH)
    expect(unknown.status).toBe(404)
    expect(unknown.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(unknown.headers['content-language']).toBe('zh-CN')
    expect(varyOf(unknown)).toContain('accept-language')
    expect(unknown.text).toContain('<html lang="zh-CN">')
    expect(unknown.text).toContain('<title>正在登录</title>')
    expect(unknown.text).toContain('<p id="note">正在登录…</p>')
    expect(pageResult(unknown.text)).toEqual({
      targetOrigin: PUBLIC_URL,
      message: {
        type: 'auth:oauth:result',
        success: false,
        provider: 'wechat',
        message: '不支持此登录方式',
        data: null,
      },
    })
    const pkce = await get(
      `/auth/oauth/google/start?redirect_to=${encodeURIComponent(`${PUBLIC_URL}/back`)}`,
      ZH,
    )
    expect(pkce.status).toBe(400)
    expect(pageResult(pkce.text).message.message).toBe(
      'code_challenge 必须是 PKCE 校验码（code_verifier）的 S256 摘要',
    )
    const elsewhere = await get('/auth/oauth/google/start?redirect_to=https%3A%2F%2Fevil.example%2F', ZH)
    expect(pageResult(elsewhere.text).message.message).toBe('redirect_to 必须是本应用的地址')
    // in English by default
    const english = await get('/auth/oauth/wechat/start')
    expect(english.headers['content-language']).toBe('en')
    expect(english.text).toContain('<html lang="en">')
    expect(english.text).toContain('<title>Signing in</title>')
    expect(pageResult(english.text).message.message).toBe('This sign-in provider is not available')
  })

  it('R1.18 a reset mail shows its reset key in the language of the request, in both parts, and the key resets', async () => {
    const words = {
      'zh-CN': {
        headers: ZH,
        key: '如果验证码被拒绝，请改为输入以下重置密钥',
        subject: '你的 Tessera 密码重置验证码',
      },
      en: {
        headers: { 'accept-language': 'en' },
        key: 'If the code is refused, enter this reset key instead',
        subject: 'Your code to reset your Tessera password',
      },
    }
    for (const [language, said] of Object.entries(words)) {
      const user = await registerUser(service.app)
      const sent = await post(
        '/auth/email/send-code',
        { email: user.email, purpose: 'reset_password' },
        said.headers,
      )
      expect(sent.status, sent.text).toBe(200)
      const mail = await mailbox.next(user.email)
      expect(mail.subject, language).toBe(said.subject)
      const key = resetKeyIn(mail)
      expect(key, language).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){6}$/)
      for (const part of [mail.text, mail.html]) {
        expect(part, language).toContain(said.key)
        expect(part, language).toContain(key)
        expect(part, language).toContain(codeIn(mail))
      }
      // no PASSWORD_RESET_URL here: no link
      expect(mail.html, language).not.toContain('<a ')
      expect(mail.subject, language).not.toContain(key)
      const reset = await post(
        '/auth/password/reset',
        { email: user.email, verification_code: key, new_password: 'staple battery horse' },
        said.headers,
      )
      expect(reset.status, reset.text).toBe(200)
      expect(reset.body.data.id).toBe(user.id)
      // the notice that follows
      await mailbox.next(user.email)
    }
  })

  it('R1.18 a mail is written in the language of the request that caused it', async () => {
    const chinese = uniqueEmail()
    expect((await post('/auth/email/send-code', { email: chinese, purpose: 'register' }, ZH)).status).toBe(
      200,
    )
    const english = uniqueEmail()
    const asked = { 'accept-language': 'en-US,en;q=0.9,zh;q=0.8' }
    expect((await post('/auth/email/send-code', { email: english, purpose: 'register' }, asked)).status).toBe(
      200,
    )
    const code = await mailbox.next(chinese)
    expect(code.subject).toBe('你的 Tessera 注册验证码')
    expect(code.text).toContain(`要使用 ${chinese} 注册 Tessera 账号，请输入以下验证码：`)
    expect(code.text).toMatch(/验证码 \d+ 分钟内有效，且只能使用一次。/)
    expect(code.html).toContain('<html lang="zh-CN">')
    expect(code.html).toContain('请忽略此邮件')
    const digits = codeIn(code)
    expect(digits).toMatch(/^\d{6}$/)
    expect(code.html).toContain(digits as string)
    const other = await mailbox.next(english)
    expect(other.subject).toBe('Your code to create your Tessera account')
    expect(other.html).toContain('<html lang="en">')
    // the code mailed in Chinese works as any other
    const registered = await post(
      '/auth/register',
      { email: chinese, password: PASSWORD, verification_code: digits },
      ZH,
    )
    expect(registered.status, registered.text).toBe(200)
    expect(registered.body.data.email_verified).toBe(true)
    // a notice takes the language of the change it tells of, not that of the account's earlier requests
    const changed = await call(service.app, 'POST', '/auth/password/change', {
      body: { current_password: PASSWORD, new_password: 'staple battery horse' },
      headers: { 'accept-language': 'zh-Hans', ...bearer(registered.body.data.access_token) },
    })
    expect(changed.status, changed.text).toBe(200)
    const notice = await mailbox.next(chinese)
    expect(notice.subject).toBe('你的 Tessera 密码已修改')
    expect(notice.text).toContain(`你的 Tessera 账号（${chinese}）的密码刚刚被修改`)
  })
})
