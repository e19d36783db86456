/** Where a JSON text stops being valid JSON, and why. */
export interface JsonSyntaxError {
  /** Index into the text (UTF-16 code units) of the first character that cannot be parsed. */
  offset: number
  message: string
}

class Stop {
  constructor(readonly error: JsonSyntaxError) {}
}

/**
 * The first syntax error of a JSON text (RFC 8259), or null when the text is valid JSON.
 *
 * JSON.parse reports a position for some mistakes only ("Unexpected token '}', ... is not valid JSON" has none on
 * Node 20 to 24) and words them differently from one V8 version to the next, so a failed parse is scanned again
 * here to point at line and column with the same text on every Node version.
 */
export function findJsonSyntaxError(text: string): JsonSyntaxError | null {
  let i = 0

  const stop = (message: string): never => {
    throw new Stop({ offset: i, message: i >= text.length ? 'unexpected end of input' : message })
  }
  const skipWhitespace = () => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++
  }
  const expect = (char: string, expected: string) => {
    skipWhitespace()
    if (text.charAt(i) !== char) stop(`expected ${expected}, found ${describe(text, i)}`)
    i++
  }

  const string = () => {
    i++
    for (;;) {
      if (i >= text.length) stop('')
      const code = text.charCodeAt(i)
      if (code === 0x22) {
        i++
        return
      }
      if (code < 0x20) stop(`${describe(text, i)} is not allowed inside a string`)
      if (code === 0x5c) {
        const escaped = text.charAt(i + 1)
        if (
          escaped === 'u'
            ? !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))
            : !'"\\/bfnrt'.includes(escaped)
        ) {
          stop('invalid escape sequence in a string')
        }
        i += escaped === 'u' ? 6 : 2
      } else {
        i++
      }
    }
  }

  const value = (): void => {
    skipWhitespace()
    const char = text.charAt(i)
    if (char === '{') {
      i++
      skipWhitespace()
      if (text.charAt(i) === '}') {
        i++
        return
      }
      for (;;) {
        skipWhitespace()
        if (text.charAt(i) !== '"')
          stop(`expected a property name in double quotes, found ${describe(text, i)}`)
        string()
        expect(':', "':' after the property name")
        value()
        skipWhitespace()
        if (text.charAt(i) === '}') {
          i++
          return
        }
        expect(',', "',' or '}' after the property value")
      }
    }
    if (char === '[') {
      i++
      skipWhitespace()
      if (text.charAt(i) === ']') {
        i++
        return
      }
      for (;;) {
        value()
        skipWhitespace()
        if (text.charAt(i) === ']') {
          i++
          return
        }
        expect(',', "',' or ']' after the array element")
      }
    }
    if (char === '"') {
      string()
      return
    }
    if (char === '-' || (char >= '0' && char <= '9')) {
      const number = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
      number.lastIndex = i
      const match = number.exec(text)
      if (!match) {
        stop('invalid number')
        return
      }
      // a valid prefix followed by more of a number ("01", "1.", "1e5e") is still a bad number
      const end = i + match[0].length
      if (/[0-9.eE+-]/.test(text.charAt(end))) {
        i = end
        stop('invalid number')
      }
      i = end
      return
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length
        return
      }
    }
    stop(`unexpected ${describe(text, i)}`)
  }

  try {
    value()
    skipWhitespace()
    if (i < text.length) stop(`unexpected ${describe(text, i)} after the JSON value`)
    return null
  } catch (error) {
    if (error instanceof Stop) return error.error
    // nesting deeper than this scanner's stack: JSON.parse has failed anyway, the caller reports it without a place
    if (error instanceof RangeError) return null
    throw error
  }
}

/** A character as a reader can recognize it: quoted when printable, as U+XXXX when not. */
function describe(text: string, offset: number): string {
  const codePoint = text.codePointAt(offset)
  if (codePoint === undefined) return 'the end of input'
  const char = String.fromCodePoint(codePoint)
  return /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(char)
    ? `'${char}'`
    : `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`
}
