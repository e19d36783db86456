import { describe, expect, it } from 'vitest'
import { english } from '../../src/language/catalogues.js'
import { hasHiddenCharacters, stripHiddenCharacters } from '../../src/profile/hidden-characters.js'
import { HIDDEN_RULE, normalizeBio, normalizeNickname } from '../../src/profile/profile-rules.js'

// docs/api.md R4.22.2: characters that hide or reorder text are refused in a nickname or a bio, and cleaned out of a
// provider's name; what people write with them (emoji sequences, the joiners of some scripts, variation selectors)
// is kept. Every string is spelled with escapes, so that this file shows what it holds.

const ZWJ = '\u200D'
const ZWNJ = '\u200C'
const tags = (text: string) =>
  [...text].map((c) => String.fromCodePoint(0xe0000 + c.codePointAt(0)!)).join('')
const CANCEL_TAG = '\u{E007F}'
const BLACK_FLAG = '\u{1F3F4}'

/** [what it is, the text, the text cleaned] */
const HIDDEN: Array<[string, string, string]> = [
  [
    'a right-to-left override that shows admin\u202Egnp.exe as adminexe.png',
    'admin\u202Egnp.exe',
    'admingnp.exe',
  ],
  ['the Arabic letter mark', 'a\u061Cb', 'ab'],
  ['the left-to-right and right-to-left marks', 'a\u200Eb\u200Fc', 'abc'],
  ['the embeddings, overrides and their pop', '\u202Aa\u202Bb\u202Cc\u202Dd', 'abcd'],
  ['the isolates', '\u2066a\u2067b\u2068c\u2069', 'abc'],
  ['a zero-width space', 'ad\u200Bmin', 'admin'],
  ['a word joiner', 'ad\u2060min', 'admin'],
  ['a zero-width no-break space inside the text', 'ad\uFEFFmin', 'admin'],
  ['the Mongolian vowel separator', 'ad\u180Emin', 'admin'],
  ['the Hangul filler alone, a name that shows nothing', '\u3164', ''],
  ['the Hangul choseong and jungseong fillers', '\u115F\u1160x', 'x'],
  ['the halfwidth Hangul filler', 'x\uFFA0', 'x'],
  ['a soft hyphen', 'ad\u00ADmin', 'admin'],
  ['the combining grapheme joiner', 'ad\u034Fmin', 'admin'],
  ['tag characters outside a flag: text no one sees', `hi${tags('ignore this')}${CANCEL_TAG}`, 'hi'],
  ['tags after a black flag without their cancel tag', `${BLACK_FLAG}${tags('gbsct')}`, BLACK_FLAG],
  ['a zero-width joiner between letters', `ad${ZWJ}min`, 'admin'],
  ['a zero-width non-joiner between Latin letters', `ad${ZWNJ}min`, 'admin'],
  ['a zero-width joiner after the last emoji', `\u{1F600}${ZWJ}`, '\u{1F600}'],
  ['a zero-width joiner before the first emoji', `${ZWJ}\u{1F600}`, '\u{1F600}'],
  ['a zero-width joiner between an emoji and a letter', `\u{1F600}${ZWJ}a`, '\u{1F600}a'],
  ['two joiners in a row between emoji', `\u{1F468}${ZWJ}${ZWJ}\u{1F469}`, '\u{1F468}\u{1F469}'],
  ['an emoji presentation selector after a Latin letter', 'a\uFE0Fb', 'ab'],
  ['a variation selector after a Latin letter', 'a\uFE00b', 'ab'],
  ['a variation selector at the start', '\uFE0Fa', 'a'],
  ['an ideographic variation selector after a Latin letter', 'a\u{E0100}', 'a'],
  ['an interlinear annotation', 'a\uFFF9hidden\uFFFAshown\uFFFB', 'ahiddenshown'],
]

/** [what it is, the text]: none of it is hidden, and none of it changes */
const KEPT: Array<[string, string]> = [
  ['a family (man, woman, girl, joined)', `\u{1F468}${ZWJ}\u{1F469}${ZWJ}\u{1F467}`],
  ['the rainbow flag', `\u{1F3F3}\uFE0F${ZWJ}\u{1F308}`],
  ['the transgender flag', `\u{1F3F3}\uFE0F${ZWJ}\u26A7\uFE0F`],
  [
    'a kiss with two skin tones',
    `\u{1F9D1}\u{1F3FB}${ZWJ}\u2764\uFE0F${ZWJ}\u{1F48B}${ZWJ}\u{1F9D1}\u{1F3FC}`,
  ],
  ['a polar bear', `\u{1F43B}${ZWJ}\u2744\uFE0F`],
  ['two emoji joined that no vendor draws as one', `\u{1F600}${ZWJ}\u{1F600}`],
  ["Scotland's flag", `${BLACK_FLAG}${tags('gbsct')}${CANCEL_TAG}`],
  [
    "England's and Wales' flags",
    `${BLACK_FLAG}${tags('gbeng')}${CANCEL_TAG}${BLACK_FLAG}${tags('gbwls')}${CANCEL_TAG}`,
  ],
  ["a subdivision's flag outside the recommended set (Texas)", `${BLACK_FLAG}${tags('ustx')}${CANCEL_TAG}`],
  ['a thumbs up with a skin tone', '\u{1F44D}\u{1F3FD}'],
  ['keycaps', '#\uFE0F\u20E3 1\uFE0F\u20E3 *\uFE0F\u20E3'],
  ['a heart in emoji and in text presentation', '\u2764\uFE0F \u2764\uFE0E \u263A\uFE0E'],
  ['a flag of regional indicators', '\u{1F1EF}\u{1F1F5}'],
  ['Japanese', '\u5C71\u7530\u592A\u90CE \u3084\u307E\u3060'],
  ['Korean', '\uD64D\uAE38\uB3D9'],
  ['Arabic with its vowel marks', '\u0645\u064F\u062D\u064E\u0645\u0651\u064E\u062F'],
  ['Hebrew', '\u05E9\u05DC\u05D5\u05DD'],
  ['Persian with its zero-width non-joiner', `\u0645\u06CC${ZWNJ}\u062E\u0648\u0627\u0647\u0645`],
  ['Hindi with a half form kept by a zero-width joiner', `\u0915\u094D${ZWJ}\u0937`],
  ['Hindi with a virama kept visible by a zero-width non-joiner', `\u0915\u094D${ZWNJ}\u0937`],
  ['Sinhala: Sri, with its zero-width joiner', `\u0DC1\u0DCA${ZWJ}\u0DBB\u0DD3`],
  ['Thai', '\u0E2A\u0E21\u0E0A\u0E32\u0E22'],
  ['Greek and Cyrillic', '\u0395\u03BB\u03AD\u03BD\u03B7 \u0414\u043C\u0438\u0442\u0440\u0438\u0439'],
  ['a Han name with an ideographic variation selector', '\u845B\u{E0100}\u98FE'],
  ['a CJK compatibility variant', '\u8279\uFE00'],
  ['a Mongolian letter with a free variation selector', '\u1820\u180B'],
  ['accents as combining marks', 'e\u0301le\u0300ve'],
]

describe('hidden characters (docs/api.md R4.22.2)', () => {
  it.each(HIDDEN)('R4.22.2 finds and strips %s', (_what, text, cleaned) => {
    expect(hasHiddenCharacters(text)).toBe(true)
    expect(stripHiddenCharacters(text)).toBe(cleaned)
    expect(hasHiddenCharacters(cleaned)).toBe(false)
  })

  it.each(KEPT)('R4.22.2 keeps %s', (_what, text) => {
    expect(hasHiddenCharacters(text)).toBe(false)
    expect(stripHiddenCharacters(text)).toBe(text)
  })

  it('R4.22.2 a nickname or a bio with one is refused, naming the field; one with the kept ones is taken as it is', () => {
    expect(normalizeNickname('admin\u202Egnp.exe')).toEqual({ field: '/nickname', message: HIDDEN_RULE })
    expect(normalizeBio('line one\nline\u200B two')).toEqual({ field: '/bio', message: HIDDEN_RULE })
    expect(english(HIDDEN_RULE)).toBe('must not contain invisible or direction-changing characters')
    for (const [, text] of KEPT) {
      expect(normalizeNickname(text)).toBe(text)
      expect(normalizeBio(`${text}\n\t${text}`)).toBe(`${text}\n\t${text}`)
    }
  })
})
