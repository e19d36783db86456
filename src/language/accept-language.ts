import { type Catalogue, catalogues, DEFAULT_LANGUAGE } from './catalogues.js'

/** The ranges of one header read at most: a longer list is no one's real preference, and bounded work per request. */
const MAX_RANGES = 32

/** One entry of Accept-Language (RFC 9110 §12.5.4): a language range and its weight. */
const ENTRY = /^([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)(?:;[qQ]=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?))?$/

/**
 * docs/api.md R1.16: the language of an answer from the request's `Accept-Language`. Its ranges are taken by
 * weight (`q`, 1 when absent; ranges of equal weight in their order), and the first one a language the service
 * speaks accepts decides; `q=0` means "not this", so such a range decides nothing. A range no catalogue accepts
 * (`zh-TW`, `fr`) is passed over for the next; `*`, no header, or a header of none of them, is the default
 * (English). Malformed entries are skipped.
 */
export function negotiateLanguage(
  header: string | readonly string[] | undefined,
  speaks: Iterable<Catalogue> = catalogues().values(),
): string {
  if (header === undefined) return DEFAULT_LANGUAGE
  const ranges = parseAcceptLanguage(typeof header === 'string' ? header : header.join(','))
  const known = [...speaks]
  for (const range of ranges) {
    if (range === '*') return DEFAULT_LANGUAGE
    const catalogue = known.find((candidate) => accepts(candidate, range))
    if (catalogue !== undefined) return catalogue.language
  }
  return DEFAULT_LANGUAGE
}

/** The ranges of an Accept-Language value with a weight above 0, the most wanted first, lower-cased. */
export function parseAcceptLanguage(value: string): string[] {
  const entries: Array<{ range: string; weight: number; order: number }> = []
  for (const part of value.split(',', MAX_RANGES)) {
    const match = ENTRY.exec(part.replace(/[ \t]+/g, ''))
    if (match === null) continue
    const weight = match[2] === undefined ? 1 : Number(match[2])
    if (weight > 0) entries.push({ range: (match[1] as string).toLowerCase(), weight, order: entries.length })
  }
  return entries.sort((a, b) => b.weight - a.weight || a.order - b.order).map((entry) => entry.range)
}

/**
 * Whether `catalogue` answers the range `range` (lower-case). A range is read as language, then a script or else a
 * region (`zh-hans-cn` is `zh-hans`: the script says how it is written, whatever the region), and is accepted when
 * the catalogue lists that (`zh-hans`, `zh-cn`), or the bare language when the range has neither (`zh`), or
 * `<language>-*`. So `zh-TW` and `zh-Hant` are not the `zh-CN` catalogue's although `zh` is.
 */
function accepts(catalogue: Catalogue, range: string): boolean {
  const [language = '', first] = range.split('-')
  const decisive =
    first === undefined
      ? language
      : /^(?:[a-z]{4}|[a-z]{2}|\d{3})$/.test(first)
        ? `${language}-${first}`
        : // another subtag first (an extended language such as `zh-yue`, a variant) makes it a language of its own
          range
  return catalogue.accepts.some((accepted) => {
    const lower = accepted.toLowerCase()
    return lower === decisive || lower === `${language}-*`
  })
}
