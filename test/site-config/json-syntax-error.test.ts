import { describe, expect, it } from 'vitest'
import { findJsonSyntaxError } from '../../src/site-config/json-syntax-error.js'

function parses(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

const SAMPLE = `{
  "toc": { "maxLevel": 3, "title": "On this page", "collapseControl": { "enabled": true } },
  "sitemap": { "priority": -0.5e+2, "exclude": ["/a/", "\\u00e9\\n\\"", []], "x": null, "y": false },
  "footer": { "copyright": "© 2026 例" }
}`

describe('findJsonSyntaxError', () => {
  it.each([
    ['{"a": }', 6, "unexpected '}'"],
    ['{"a": tru}', 6, "unexpected 't'"],
    ['{"a":1,}', 7, "expected a property name in double quotes, found '}'"],
    ["{'a': 1}", 1, "expected a property name in double quotes, found '''"],
    ['{"a" 1}', 5, "expected ':' after the property name, found '1'"],
    ['{"a": 1 "b": 2}', 8, "expected ',' or '}' after the property value, found '\"'"],
    ['[1 2]', 3, "expected ',' or ']' after the array element, found '2'"],
    ['[1,]', 3, "unexpected ']'"],
    ['{"a": "x\u0001"}', 8, 'U+0001 is not allowed inside a string'],
    ['{"a": "\\x"}', 7, 'invalid escape sequence in a string'],
    ['{"a": "\\u12g4"}', 7, 'invalid escape sequence in a string'],
    ['{"a": 01}', 7, 'invalid number'],
    ['{"a": 1.}', 7, 'invalid number'],
    ['{"a": -}', 6, 'invalid number'],
    ['{"a": +1}', 6, "unexpected '+'"],
    ['{} x', 3, "unexpected 'x' after the JSON value"],
    ['\uFEFF{}', 0, 'unexpected U+FEFF'],
    ['', 0, 'unexpected end of input'],
    ['{"a": [1, 2', 11, 'unexpected end of input'],
    ['{"a": "open', 11, 'unexpected end of input'],
  ])('finds the error in %j at offset %i', (text, offset, message) => {
    expect(parses(text)).toBe(false)
    expect(findJsonSyntaxError(text)).toEqual({ offset, message })
  })

  it('finds nothing in valid JSON', () => {
    expect(parses(SAMPLE)).toBe(true)
    for (const text of [SAMPLE, '0', '-0.1E-3', '"x"', 'null', ' [ ] ', '{}', '\t{\r\n}\n']) {
      expect(findJsonSyntaxError(text), text).toBeNull()
    }
  })

  it('agrees with JSON.parse on every truncation, deletion and insertion of a sample', () => {
    const variants: string[] = []
    for (let i = 0; i <= SAMPLE.length; i++) {
      variants.push(SAMPLE.slice(0, i), SAMPLE.slice(0, i) + SAMPLE.slice(i + 1))
      for (const char of ['}', ']', ',', ':', '"', '\\', '0', '.', 'e', '-', ' ', 'x']) {
        variants.push(SAMPLE.slice(0, i) + char + SAMPLE.slice(i))
      }
    }
    const disagreements = variants.filter((text) => parses(text) !== (findJsonSyntaxError(text) === null))
    expect(disagreements).toEqual([])
  })
})
