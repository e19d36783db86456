/** The longest device description kept: enough for "Firefox on Android", never a whole User-Agent. */
export const MAX_DEVICE_LENGTH = 64

/** Browsers by their User-Agent token, most specific first: Edge and Opera also say Chrome, Chrome also says Safari. */
const BROWSERS: ReadonlyArray<[name: string, token: RegExp]> = [
  ['Edge', /\bEdg(?:e|A|iOS)?\//],
  ['Opera', /\b(?:OPR|Opera)\//],
  ['Samsung Internet', /\bSamsungBrowser\//],
  ['Firefox', /\b(?:Firefox|FxiOS)\//],
  ['Chrome', /\b(?:Chrome|CriOS|Chromium)\//],
  ['Safari', /\bVersion\/[\d.]+.*\bSafari\//],
]

/** Operating systems, most specific first: Android also says Linux, iOS also says Mac OS X. */
const SYSTEMS: ReadonlyArray<[name: string, token: RegExp]> = [
  ['Android', /\bAndroid\b/],
  ['iOS', /\b(?:iPhone|iPad|iPod)\b/],
  ['ChromeOS', /\bCrOS\b/],
  ['Windows', /\bWindows\b/],
  ['macOS', /\bMac OS X\b|\bMacintosh\b/],
  ['Linux', /\bLinux\b/],
]

/**
 * A short description of the device a session started on, from its User-Agent header (docs/api.md §4.11): "Firefox
 * on Linux", "Safari on iOS"; for a program that is not a browser its first product name ("curl", "okhttp"); '' when
 * there is no header. Only for people to recognize their devices by: a User-Agent is whatever the client says, so
 * the description is bounded and printable, and nothing relies on it.
 */
export function describeDevice(userAgent: string | null | undefined): string {
  if (userAgent === null || userAgent === undefined) return ''
  const text = userAgent.slice(0, 512)
  const browser = BROWSERS.find(([, token]) => token.test(text))?.[0]
  const system = SYSTEMS.find(([, token]) => token.test(text))?.[0]
  if (browser !== undefined) return system === undefined ? browser : `${browser} on ${system}`
  const product = /^[\x21-\x7e]+?(?=\/|\s|$)/.exec(text.trim())?.[0] ?? ''
  const description = system === undefined || product === '' ? product : `${product} on ${system}`
  return printable(description).slice(0, MAX_DEVICE_LENGTH)
}

/** Only printable ASCII is kept: the description is shown in pages and terminals. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '')
}
