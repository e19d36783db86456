/**
 * Text a user or an operator typed, made safe to echo in one line of an error: on a terminal, in a log. Whatever
 * someone passes as an argument or a variable (ANSI escape sequences that recolour or clear a terminal, newlines that
 * forge further lines, a credential inside a URL, 100 KB of text) comes back as a short, visible, quoted string.
 */

/** At most this many characters of the value itself are shown; the rest is counted. */
export const MAX_SHOWN = 80

/**
 * Control characters (C0, DEL, C1), the line and paragraph separators, and the bidirectional controls that reorder
 * what a terminal shows (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
 */
function isUnprintable(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  )
}

/** `value` in double quotes, each unprintable character as an escape (`\n`, `\x1b`, `\u202e`), cut after MAX_SHOWN. */
export function quoted(value: string): string {
  const characters = Array.from(value)
  const shown = characters.slice(0, MAX_SHOWN).join('')
  const rest = characters.length - MAX_SHOWN
  const cut = rest > 0 ? `… (${rest} more characters)` : ''
  return `"${escapeUnprintable(shown).replace(/"/g, '\\"')}"${cut}`
}

/** Every unprintable character of `text` as a visible escape; the rest as it is. */
export function escapeUnprintable(text: string): string {
  let escaped = ''
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0
    if (!isUnprintable(code)) escaped += character
    else if (character === '\n') escaped += '\\n'
    else if (character === '\r') escaped += '\\r'
    else if (character === '\t') escaped += '\\t'
    else
      escaped +=
        code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  }
  return escaped
}

/** `scheme://user:password@host` to `scheme://***@host`, wherever a URL with credentials appears in `text`. */
export function maskCredentials(text: string): string {
  // found from its `://`, not from its scheme: a scheme tried at every letter of a long run of letters took time in
  // the square of the run's length (23 s for a value of 100,000 letters)
  return text.replace(/:\/\/[^/?#@\s]*@/g, '://***@')
}

/** At most this many characters of one error line are written. */
export const MAX_LINE = 500

/** Each line of a message of several lines as oneLine makes it. */
export function printableLines(message: string): string {
  return message.split('\n').map(oneLine).join('\n')
}

/** A message as one line of an error: every unprintable character escaped (newlines too), cut after MAX_LINE. */
export function oneLine(message: string): string {
  const escaped = escapeUnprintable(message)
  const characters = Array.from(escaped)
  if (characters.length <= MAX_LINE) return escaped
  return `${characters.slice(0, MAX_LINE).join('')}… (cut)`
}
