import { describe, expect, it } from 'vitest'
import { negotiateLanguage, parseAcceptLanguage } from '../../src/language/accept-language.js'
import type { Catalogue } from '../../src/language/catalogues.js'

// docs/api.md R1.16: the language of an answer, from Accept-Language, over the catalogues of messages/

describe('the language of an answer', () => {
  it.each([
    // no preference, or one for English: English
    [undefined, 'en'],
    ['', 'en'],
    ['en', 'en'],
    ['en-US', 'en'],
    ['EN-gb', 'en'],
    ['*', 'en'],
    // the Chinese the catalogue zh-CN speaks, in any case and with anything after its script or region
    ['zh', 'zh-CN'],
    ['zh-CN', 'zh-CN'],
    ['zh-cn', 'zh-CN'],
    ['ZH-SG', 'zh-CN'],
    ['zh-Hans', 'zh-CN'],
    ['zh-hans-cn', 'zh-CN'],
    ['zh-Hans-HK', 'zh-CN'],
    ['zh-CN-u-ca-chinese', 'zh-CN'],
    // other Chinese is passed over for the next preference, and is English without one
    ['zh-TW', 'en'],
    ['zh-HK', 'en'],
    ['zh-MO', 'en'],
    ['zh-Hant', 'en'],
    ['zh-Hant-CN', 'en'],
    ['zh-yue', 'en'],
    ['zh-TW, zh-CN;q=0.8', 'zh-CN'],
    ['zh-Hant, zh;q=0.5', 'zh-CN'],
    ['zh-HK, en;q=0.9, zh;q=0.8', 'en'],
    // a language the service does not speak is passed over too
    ['fr', 'en'],
    ['fr-CH, fr;q=0.9, zh;q=0.8, en;q=0.7', 'zh-CN'],
    ['ja, de;q=0.5', 'en'],
    // weights decide, whatever the order; equal weights go in the order given
    ['en;q=0.5, zh-CN', 'zh-CN'],
    ['zh;q=0.4, en;q=0.6', 'en'],
    ['en;q=0.8, zh;q=0.8', 'en'],
    ['zh;q=0.8, en;q=0.8', 'zh-CN'],
    ['en;q=1.0, zh;q=0.999', 'en'],
    ['zh-CN,zh;q=0.9,en;q=0.8,en-GB;q=0.7,en-US;q=0.6', 'zh-CN'],
    ['en-US,en;q=0.9,zh-CN;q=0.8', 'en'],
    ['zh-CN;Q=0.3, en;q=0.2', 'zh-CN'],
    ['  zh-CN ; q=0.9 ,en;q=0.1', 'zh-CN'],
    // q=0 excludes: such a range decides nothing
    ['zh;q=0, en', 'en'],
    ['zh-CN;q=0', 'en'],
    ['zh;q=0.0, zh-Hans;q=0.000', 'en'],
    ['en;q=0, zh;q=0.1', 'zh-CN'],
    ['*;q=0, zh;q=0.2', 'zh-CN'],
    // `*` is any language: the default, where it comes before a Chinese range
    ['*, zh;q=0.5', 'en'],
    ['zh-TW, *;q=0.5, zh;q=0.1', 'en'],
    // malformed entries are skipped; a malformed header is no preference
    ['zh;q=2, en;q=0.5', 'en'],
    ['zh;q=abc', 'en'],
    ['zh;q=0.1234, zh-CN;q=0.1', 'zh-CN'],
    [';;;,,,', 'en'],
    ['zh_CN', 'en'],
    ['<script>, zh', 'zh-CN'],
  ])('%j → %s', (header, language) => {
    expect(negotiateLanguage(header)).toBe(language)
  })

  it('reads a header given more than once as one list', () => {
    expect(negotiateLanguage(['fr', 'zh;q=0.5'])).toBe('zh-CN')
    expect(negotiateLanguage(['zh-TW', 'en;q=0.2, zh;q=0.1'])).toBe('en')
  })

  it('reads at most 32 ranges of a header', () => {
    const many = `${Array.from({ length: 40 }, (_, n) => `x${n}`).join(', ')}, zh`
    expect(negotiateLanguage(many)).toBe('en')
    expect(negotiateLanguage(`${Array.from({ length: 31 }, (_, n) => `x${n}`).join(', ')}, zh`)).toBe('zh-CN')
  })

  it('orders the ranges by weight, keeps the order of equal ones, and leaves out those of weight 0', () => {
    expect(parseAcceptLanguage('da, en-GB;q=0.8, en;q=0.7, zh;q=0, fr;q=0.8')).toEqual([
      'da',
      'en-gb',
      'fr',
      'en',
    ])
  })

  it('answers a third language from its catalogue alone: its ranges, nothing in the code', () => {
    const speaks: Catalogue[] = [
      { language: 'en', accepts: ['en', 'en-*'], messages: {} },
      { language: 'zh-CN', accepts: ['zh', 'zh-Hans', 'zh-CN', 'zh-SG'], messages: {} },
      { language: 'zh-TW', accepts: ['zh-Hant', 'zh-TW', 'zh-HK', 'zh-MO'], messages: {} },
    ]
    expect(negotiateLanguage('zh-TW', speaks)).toBe('zh-TW')
    expect(negotiateLanguage('zh-Hant-HK', speaks)).toBe('zh-TW')
    expect(negotiateLanguage('zh-HK, zh-CN', speaks)).toBe('zh-TW')
    expect(negotiateLanguage('zh', speaks)).toBe('zh-CN')
    expect(negotiateLanguage('fr', speaks)).toBe('en')
  })
})
