import { describe, expect, it } from 'vitest'
import { describeDevice, MAX_DEVICE_LENGTH } from '../../src/sessions/device.js'

describe('describeDevice', () => {
  it.each([
    ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox on Linux'],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
      'Chrome on Android',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
      'Safari on iOS',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
      'Edge on Windows',
    ],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
      'Safari on macOS',
    ],
    ['curl/8.11.0', 'curl'],
    ['okhttp/4.12.0', 'okhttp'],
    ['node', 'node'],
  ])('%s is "%s"', (userAgent, description) => {
    expect(describeDevice(userAgent)).toBe(description)
  })

  it('is empty without a User-Agent, and bounded and printable for a hostile one', () => {
    expect(describeDevice(undefined)).toBe('')
    expect(describeDevice(null)).toBe('')
    expect(describeDevice('')).toBe('')
    const long = describeDevice(`${'x'.repeat(1000)}/1.0`)
    expect(long.length).toBe(MAX_DEVICE_LENGTH)
    expect(describeDevice('evil\u0007\u001b[31m/1')).toMatch(/^[\x20-\x7e]*$/)
  })
})
