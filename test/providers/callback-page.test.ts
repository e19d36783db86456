import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  CALLBACK_PAGE_POLICY,
  CALLBACK_SCRIPT_HASH,
  callbackPage,
} from '../../src/providers/callback-page.js'
import { pageResult } from './provider-harness.js'

// docs/api.md §4.24: the callback page holds its result where no value can become markup or code

describe('the callback page', () => {
  const hostile = '</script><script>alert(1)</script><!-- & \u2028\u2029 </SCRIPT >'
  const message = {
    type: 'auth:oauth:result' as const,
    success: true,
    provider: 'google',
    message: 'Signed in',
    data: { nickname: hostile, email: 'a@example.com' },
  }

  it('escapes every character that could end the JSON block, and the value reads back the same', () => {
    const html = callbackPage('https://app.example.com', message, 'en')
    const block = /<script type="application\/json" id="result">([\s\S]*?)<\/script>/i.exec(html)?.[1] ?? ''
    expect(block).not.toMatch(/[<>&\u2028\u2029]/)
    expect(html.match(/<script\b/gi)).toHaveLength(2)
    expect(html.match(/<\/script/gi)).toHaveLength(2)
    expect(pageResult(html)).toEqual({ targetOrigin: 'https://app.example.com', message })
  })

  it("allows its one script by the script's hash, and nothing else", () => {
    const html = callbackPage(null, { ...message, success: false, data: null }, 'en')
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)]
    expect(scripts).toHaveLength(1)
    const hash = createHash('sha256')
      .update(scripts[0]?.[1] ?? '')
      .digest('base64')
    expect(CALLBACK_SCRIPT_HASH).toBe(`sha256-${hash}`)
    expect(CALLBACK_PAGE_POLICY).toBe(
      `default-src 'none'; script-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    )
    // without a target origin, the script posts nothing
    expect(pageResult(html).targetOrigin).toBeNull()
  })
})
