import { describe, expect, it } from 'vitest'
import type { SiteConfig } from '../../src/site-config/site-config-schema.js'
import { validateSiteConfig } from '../../src/site-config/validate-site-config.js'

/** A configuration that uses every field of spec 2.6. */
const FULL: SiteConfig = {
  breadcrumb: { enabled: true, showHome: false },
  reading: { showTime: true, showProgress: true, fullscreen: { enabled: true } },
  sidebar: { enabled: true, collapseControl: { enabled: true, defaultCollapsed: false } },
  toc: {
    enabled: true,
    collapseControl: { enabled: false, defaultCollapsed: true },
    maxLevel: 3,
    title: 'On this page',
  },
  footer: {
    enabled: true,
    copyright: '© 2026 Example',
    beian: { text: '京ICP备12345678号', url: 'https://beian.miit.gov.cn/' },
    policeBeian: { text: '京公网安备 11010502000001号', url: 'https://beian.mps.gov.cn/' },
    poweredBy: true,
  },
  sitemap: { enabled: true, changefreq: 'weekly', priority: 0.5, exclude: ['/drafts/', '/private/'] },
  feed: { enabled: true, title: 'Example', description: 'Latest pages', limit: 20 },
}

/** `value` set at `path` in an otherwise empty configuration. */
function at(path: string, value: unknown): unknown {
  return path
    .split('.')
    .reverse()
    .reduce<unknown>((inner, key) => ({ [key]: inner }), value)
}

function errorsOf(value: unknown) {
  const result = validateSiteConfig(value)
  return result.ok ? [] : result.errors
}

describe('validateSiteConfig: valid configurations', () => {
  it('accepts the empty object', () => {
    expect(validateSiteConfig({})).toEqual({ ok: true, value: {} })
  })

  it('accepts an object using every field', () => {
    expect(validateSiteConfig(FULL)).toEqual({ ok: true, value: FULL })
  })

  it('returns the value itself: nothing coerced, defaulted or removed', () => {
    const value = { toc: { maxLevel: 2 }, theme: 'dark' }
    const result = validateSiteConfig(value)
    expect(result.ok && result.value).toBe(value)
    expect(value).toEqual({ toc: { maxLevel: 2 }, theme: 'dark' })
  })

  it.each([
    ['at the top level', { theme: 'dark' }],
    ['inside breadcrumb', { breadcrumb: { separator: '/' } }],
    ['inside reading', { reading: { fontSize: 16 } }],
    ['inside reading.fullscreen', { reading: { fullscreen: { enabled: true, hotkey: 'f' } } }],
    ['inside sidebar', { sidebar: { enabled: true, width: 280 } }],
    ['inside toc', { toc: { sticky: true } }],
    [
      'inside a collapseControl (sidebar)',
      { sidebar: { collapseControl: { enabled: true, icon: 'chevron' } } },
    ],
    ['inside a collapseControl (toc)', { toc: { collapseControl: { animate: false } } }],
    ['inside footer', { footer: { links: [{ text: 'a' }] } }],
    [
      'inside a footerLink (beian)',
      { footer: { beian: { text: 'x', url: 'https://e.com', target: '_blank' } } },
    ],
    ['inside a footerLink (policeBeian)', { footer: { policeBeian: { icon: 'badge.png' } } }],
    ['inside sitemap', { sitemap: { hostname: 'https://example.com' } }],
    ['inside feed', { feed: { format: 'atom' } }],
  ])('accepts additional properties %s', (_where, value) => {
    expect(validateSiteConfig(value)).toEqual({ ok: true, value })
  })

  it.each([
    ['toc.maxLevel', 1],
    ['toc.maxLevel', 6],
    ['sitemap.priority', 0],
    ['sitemap.priority', 1],
    ['feed.limit', 1],
    ['feed.limit', 1_000_000],
    ['sitemap.exclude', []],
  ])('accepts the boundary %s = %j', (path, value) => {
    expect(validateSiteConfig(at(path, value)).ok).toBe(true)
  })

  it.each(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'])(
    'accepts sitemap.changefreq %j',
    (changefreq) => {
      expect(validateSiteConfig({ sitemap: { changefreq } }).ok).toBe(true)
    },
  )
})

describe('validateSiteConfig: wrong types', () => {
  it.each([
    ['', [], 'The site configuration must be an object, got []'],
    ['', null, 'The site configuration must be an object, got null'],
    ['', 'toc', 'The site configuration must be an object, got "toc"'],
    ['breadcrumb', true, '/breadcrumb must be an object, got true'],
    ['breadcrumb.enabled', 'yes', '/breadcrumb/enabled must be a boolean, got "yes"'],
    ['breadcrumb.showHome', 1, '/breadcrumb/showHome must be a boolean, got 1'],
    ['reading', [], '/reading must be an object, got []'],
    ['reading.showTime', 'true', '/reading/showTime must be a boolean, got "true"'],
    ['reading.showProgress', null, '/reading/showProgress must be a boolean, got null'],
    ['reading.fullscreen', true, '/reading/fullscreen must be an object, got true'],
    ['reading.fullscreen.enabled', 0, '/reading/fullscreen/enabled must be a boolean, got 0'],
    ['sidebar', 'left', '/sidebar must be an object, got "left"'],
    ['sidebar.enabled', 'no', '/sidebar/enabled must be a boolean, got "no"'],
    ['sidebar.collapseControl', true, '/sidebar/collapseControl must be an object, got true'],
    ['sidebar.collapseControl.enabled', 'on', '/sidebar/collapseControl/enabled must be a boolean, got "on"'],
    [
      'sidebar.collapseControl.defaultCollapsed',
      1,
      '/sidebar/collapseControl/defaultCollapsed must be a boolean, got 1',
    ],
    ['toc', 3, '/toc must be an object, got 3'],
    ['toc.enabled', null, '/toc/enabled must be a boolean, got null'],
    ['toc.collapseControl', [], '/toc/collapseControl must be an object, got []'],
    ['toc.collapseControl.enabled', 'x', '/toc/collapseControl/enabled must be a boolean, got "x"'],
    [
      'toc.collapseControl.defaultCollapsed',
      {},
      '/toc/collapseControl/defaultCollapsed must be a boolean, got {}',
    ],
    ['toc.maxLevel', '3', '/toc/maxLevel must be an integer from 1 to 6, got "3"'],
    ['toc.title', 42, '/toc/title must be a string, got 42'],
    ['footer', false, '/footer must be an object, got false'],
    ['footer.enabled', 'false', '/footer/enabled must be a boolean, got "false"'],
    ['footer.copyright', 2026, '/footer/copyright must be a string, got 2026'],
    ['footer.beian', 'ICP 123', '/footer/beian must be an object, got "ICP 123"'],
    ['footer.beian.text', 123, '/footer/beian/text must be a string, got 123'],
    ['footer.beian.url', null, '/footer/beian/url must be a string, got null'],
    ['footer.policeBeian', [], '/footer/policeBeian must be an object, got []'],
    ['footer.policeBeian.text', true, '/footer/policeBeian/text must be a string, got true'],
    ['footer.policeBeian.url', {}, '/footer/policeBeian/url must be a string, got {}'],
    ['footer.poweredBy', 'yes', '/footer/poweredBy must be a boolean, got "yes"'],
    ['sitemap', 'on', '/sitemap must be an object, got "on"'],
    ['sitemap.enabled', 1, '/sitemap/enabled must be a boolean, got 1'],
    [
      'sitemap.changefreq',
      7,
      '/sitemap/changefreq must be one of always, hourly, daily, weekly, monthly, yearly, never, got 7',
    ],
    ['sitemap.priority', '0.5', '/sitemap/priority must be a number from 0 to 1, got "0.5"'],
    ['sitemap.exclude', '/drafts/', '/sitemap/exclude must be an array of strings, got "/drafts/"'],
    ['feed', [], '/feed must be an object, got []'],
    ['feed.enabled', 'yes', '/feed/enabled must be a boolean, got "yes"'],
    ['feed.title', false, '/feed/title must be a string, got false'],
    ['feed.description', ['a'], '/feed/description must be a string, got ["a"]'],
    ['feed.limit', '10', '/feed/limit must be an integer of at least 1, got "10"'],
  ])('rejects %s = %j', (path, value, message) => {
    const pointer = path === '' ? '' : `/${path.replaceAll('.', '/')}`
    expect(errorsOf(path === '' ? value : at(path, value))).toEqual([{ pointer, message }])
  })
})

describe('validateSiteConfig: constraints', () => {
  it.each([
    ['toc.maxLevel', 0, '/toc/maxLevel must be an integer from 1 to 6, got 0'],
    ['toc.maxLevel', 7, '/toc/maxLevel must be an integer from 1 to 6, got 7'],
    ['toc.maxLevel', 3.5, '/toc/maxLevel must be an integer from 1 to 6, got 3.5'],
    ['toc.maxLevel', -1, '/toc/maxLevel must be an integer from 1 to 6, got -1'],
    ['sitemap.priority', -0.01, '/sitemap/priority must be a number from 0 to 1, got -0.01'],
    ['sitemap.priority', 1.01, '/sitemap/priority must be a number from 0 to 1, got 1.01'],
    ['feed.limit', 0, '/feed/limit must be an integer of at least 1, got 0'],
    ['feed.limit', 1.5, '/feed/limit must be an integer of at least 1, got 1.5'],
    ['feed.limit', -5, '/feed/limit must be an integer of at least 1, got -5'],
    [
      'sitemap.changefreq',
      'sometimes',
      '/sitemap/changefreq must be one of always, hourly, daily, weekly, monthly, yearly, never, got "sometimes"',
    ],
    [
      'sitemap.changefreq',
      'Daily',
      '/sitemap/changefreq must be one of always, hourly, daily, weekly, monthly, yearly, never, got "Daily"',
    ],
  ])('rejects %s = %j', (path, value, message) => {
    expect(errorsOf(at(path, value))).toEqual([{ pointer: `/${path.replaceAll('.', '/')}`, message }])
  })

  it('rejects sitemap.exclude containing a number, pointing at the element', () => {
    expect(errorsOf({ sitemap: { exclude: ['/a/', 3, '/b/'] } })).toEqual([
      { pointer: '/sitemap/exclude/1', message: '/sitemap/exclude/1 must be a string, got 3' },
    ])
  })

  it('rejects numbers that are not finite (YAML .inf and .nan)', () => {
    expect(errorsOf({ sitemap: { priority: Number.POSITIVE_INFINITY } })).toEqual([
      {
        pointer: '/sitemap/priority',
        message: '/sitemap/priority must be a number from 0 to 1, got Infinity',
      },
    ])
    expect(errorsOf({ toc: { maxLevel: Number.NaN } })).toEqual([
      { pointer: '/toc/maxLevel', message: '/toc/maxLevel must be an integer from 1 to 6, got NaN' },
    ])
  })
})

describe('validateSiteConfig: several errors', () => {
  it('lists every offending value once, in document order', () => {
    expect(
      errorsOf({
        toc: { maxLevel: 7, title: 1 },
        sitemap: { changefreq: 'sometimes', priority: 2, exclude: [1, 'a', false] },
        feed: { limit: 0 },
        footer: { beian: { url: 5 } },
      }),
    ).toEqual([
      { pointer: '/toc/maxLevel', message: '/toc/maxLevel must be an integer from 1 to 6, got 7' },
      { pointer: '/toc/title', message: '/toc/title must be a string, got 1' },
      { pointer: '/footer/beian/url', message: '/footer/beian/url must be a string, got 5' },
      {
        pointer: '/sitemap/changefreq',
        message:
          '/sitemap/changefreq must be one of always, hourly, daily, weekly, monthly, yearly, never, got "sometimes"',
      },
      { pointer: '/sitemap/priority', message: '/sitemap/priority must be a number from 0 to 1, got 2' },
      { pointer: '/sitemap/exclude/0', message: '/sitemap/exclude/0 must be a string, got 1' },
      { pointer: '/sitemap/exclude/2', message: '/sitemap/exclude/2 must be a string, got false' },
      { pointer: '/feed/limit', message: '/feed/limit must be an integer of at least 1, got 0' },
    ])
  })

  it('shortens a long offending value', () => {
    const [error] = errorsOf({ toc: { title: { text: 'x'.repeat(100) } } })
    expect(error?.message).toBe(`/toc/title must be a string, got {"text":"${'x'.repeat(48)}...`)
  })
})
