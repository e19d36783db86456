import { createHash } from 'node:crypto'
import { render } from '../language/catalogues.js'
import { message } from '../language/message.js'

/**
 * What the callback page posts to its opener (docs/api.md §4.24), the front end's contract: `data` is a login
 * answer's `data` on success (the account and the tokens), null on failure.
 */
export interface SignInResultMessage {
  type: 'auth:oauth:result'
  success: boolean
  provider: string
  message: string
  data: unknown
}

/**
 * The page's one script, constant text: it reads the result from the JSON block, posts it to the opener at the
 * target origin and closes the window; opened without an opener (a link, a blocked popup), it shows the message
 * instead. It takes nothing from the URL, the referrer or anything a provider sent, so it can be allowed by its hash.
 */
const SCRIPT =
  "(function(){var r=JSON.parse(document.getElementById('result').textContent);" +
  'if(window.opener&&r.targetOrigin){window.opener.postMessage(r.message,r.targetOrigin);window.close()}' +
  "else{document.getElementById('note').textContent=r.message.message}})()"

/** SCRIPT's hash, the only script the page's Content-Security-Policy allows. */
export const CALLBACK_SCRIPT_HASH = `sha256-${createHash('sha256').update(SCRIPT, 'utf8').digest('base64')}`

/**
 * No source of anything but the one script: no style, image, frame, form or base URL, and no framing of the page by
 * another (which could read nothing, but could dress it up).
 */
export const CALLBACK_PAGE_POLICY = [
  "default-src 'none'",
  `script-src '${CALLBACK_SCRIPT_HASH}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** The headers of every callback page: its policy, kept by no cache, sending no referrer on. */
export const CALLBACK_PAGE_HEADERS = {
  'content-security-policy': CALLBACK_PAGE_POLICY,
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
} as const

/**
 * The page that hands a provider sign-in's result to the window that opened it, posted only to `targetOrigin`
 * (FRONTEND_ORIGIN; null, where there is none, posts nothing): another origin that opened the popup gets nothing.
 * The result sits in a JSON block where every character that could end the script or start markup (`<`, `>`, `&`)
 * and the line separators are escaped, so no value can leave it: the front end's origin, where its tokens live, runs
 * no text a provider or a link chose. The page's own text is in `language` (docs/api.md §1.5), as the result's
 * `message` is; catalogue texts hold no markup.
 */
export function callbackPage(
  targetOrigin: string | null,
  result: SignInResultMessage,
  language: string,
): string {
  const data = escapeForScript(JSON.stringify({ targetOrigin, message: result }))
  const text = (key: string) => escapeHtml(render(language, message(key)))
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(language)}">`,
    '<head>',
    '<meta charset="utf-8">',
    `<title>${text('sign_in.page_title')}</title>`,
    '</head>',
    '<body>',
    `<p id="note">${text('sign_in.page_note')}</p>`,
    `<script type="application/json" id="result">${data}</script>`,
    `<script>${SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n')
}

/** JSON text with `<`, `>`, `&`, U+2028 and U+2029 as \u escapes: the same value, and nothing HTML reads as markup. */
function escapeForScript(json: string): string {
  return json.replace(
    /[<>&\u2028\u2029]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

/** Text as HTML: a catalogue's text is the package's own, escaped all the same. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (character) => `&#${character.charCodeAt(0)};`)
}
