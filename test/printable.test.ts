import { describe, expect, it } from 'vitest'
import { escapeUnprintable, MAX_SHOWN, maskCredentials, quoted } from '../src/printable.js'

describe('printable: echoing what someone typed', () => {
  it('escapes control characters, line separators and bidirectional controls, and leaves other text alone', () => {
    expect(escapeUnprintable('a\u001b[31mb\nc\rd\te\u0000f\u007fg\u009bh\u2028i\u202ej\u2066k')).toBe(
      'a\\x1b[31mb\\nc\\rd\\te\\x00f\\x7fg\\x9bh\\u2028i\\u202ej\\u2066k',
    )
    expect(escapeUnprintable('café ✓ 名前 🙂')).toBe('café ✓ 名前 🙂')
  })

  it('quotes, escapes an inner quote, and cuts after MAX_SHOWN characters, counting the rest', () => {
    expect(quoted('say "hi"')).toBe('"say \\"hi\\""')
    expect(quoted('x'.repeat(MAX_SHOWN))).toBe(`"${'x'.repeat(MAX_SHOWN)}"`)
    expect(quoted('🙂'.repeat(MAX_SHOWN + 5))).toBe(`"${'🙂'.repeat(MAX_SHOWN)}"… (5 more characters)`)
  })

  it('masks the user name and password of every URL in a text', () => {
    expect(maskCredentials('https://user:secret@x.example/a, redis://:pw@cache:6379')).toBe(
      'https://***@x.example/a, redis://***@cache:6379',
    )
    expect(maskCredentials('https://x.example/a@b')).toBe('https://x.example/a@b')
    expect(maskCredentials('1https://user:secret@x.example,-ftp://a:b@c')).toBe(
      '1https://***@x.example,-ftp://***@c',
    )
  })
})
