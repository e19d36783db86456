/**
 * Characters that change what a text shows without showing themselves (docs/api.md R4.22.2): the bidirectional
 * controls that reorder it (`admin\u202Egnp.exe` shows as `adminexe.png`) and the default-ignorable code points that
 * draw nothing (zero-width spaces, word joiners, fillers, tags), as Unicode's security guidance (UTS #39, after
 * UAX #31 for the joiners) restricts them. Some of them are part of what a person writes, and are kept where they
 * are: a zero-width joiner between emoji (a family: man, joiner, woman, joiner, girl), a variation selector right
 * after a character it can select, the tags of a subdivision flag (Scotland's), and the joiners of the scripts whose
 * letters they join or keep apart (Persian's zero-width non-joiner). Text itself, in any script, is never touched.
 */

/** A pictograph with its skin tone or presentation selector: what UTS #51 chains with zero-width joiners. */
const PICTOGRAPH = String.raw`\p{Extended_Pictographic}(?:\p{Emoji_Modifier}|[\uFE0E\uFE0F])?`
const EMOJI = String.raw`(?:\p{RGI_Emoji}|${PICTOGRAPH})`

/**
 * Scripts that use U+200C and U+200D between their own letters: the cursive ones, where they choose a letter's joined
 * form, and the Brahmic ones, where they choose between a conjunct and a visible virama.
 */
const JOINING_SCRIPTS = [
  'Arab',
  'Syrc',
  'Nkoo',
  'Mand',
  'Mong',
  'Rohg',
  'Adlm',
  'Deva',
  'Beng',
  'Guru',
  'Gujr',
  'Orya',
  'Taml',
  'Telu',
  'Knda',
  'Mlym',
  'Sinh',
  'Mymr',
  'Khmr',
]

/** A joiner between two letters or marks of one of JOINING_SCRIPTS; the letter before it is taken with it. */
const SCRIPT_JOINER = JOINING_SCRIPTS.map(
  (script) =>
    String.raw`[\p{scx=${script}}&&[\p{L}\p{M}]][\u200C\u200D](?=[\p{scx=${script}}&&[\p{L}\p{M}]])`,
).join('|')

/** Where a hidden character is part of what is written: each alternative takes it with the character it belongs to. */
const KEPT = [
  // a subdivision flag: black flag, its tag letters and digits, cancel tag (UTS #51 emoji tag sequence)
  String.raw`\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{3,7}\u{E007F}`,
  // an emoji (keycaps, flags and modifier sequences included), or a chain of them with zero-width joiners
  String.raw`${EMOJI}(?:\u200D${EMOJI})*`,
  // text or emoji presentation of a character that has both (digits, #, *, ©, ↔ …)
  String.raw`\p{Emoji}[\uFE0E\uFE0F]`,
  // a standardized variant (math symbols, CJK compatibility ideographs, Myanmar, …); ASCII letters have none
  String.raw`[[\p{L}\p{N}\p{S}]--\p{ASCII}][\uFE00-\uFE0D]`,
  // an ideographic variation sequence: the glyph of a name written in Han (U+845B U+E0100)
  String.raw`\p{Ideographic}[\u{E0100}-\u{E01EF}]`,
  // Mongolian's free variation selectors after a Mongolian letter
  String.raw`[\p{scx=Mong}&&\p{L}][\u180B-\u180D\u180F]`,
  SCRIPT_JOINER,
].join('|')

/** Refused unless KEPT takes them: bidirectional controls, default-ignorables, interlinear annotation controls. */
const HIDDEN = String.raw`[\p{Bidi_Control}\p{Default_Ignorable_Code_Point}\uFFF9-\uFFFB]`

/**
 * The two expressions, made at the first text checked: V8 builds the Unicode sets of `\p{RGI_Emoji}` and the
 * scripts as it parses them, which made this module's import a noticeable part of a start that checks no profile.
 * The `v` flag (RGI_Emoji, set operations) is built by the constructor: the compile target predates it.
 */
let expressions: { scan: RegExp; anyHidden: RegExp } | undefined
function hiddenExpressions(): { scan: RegExp; anyHidden: RegExp } {
  expressions ??= {
    scan: new RegExp(`(${KEPT})|${HIDDEN}`, 'gv'),
    // most text has no hidden character at all: this finds out without the scan, which tries emoji at every position
    anyHidden: new RegExp(HIDDEN, 'v'),
  }
  return expressions
}

/** `text` without its hidden characters, those KEPT where they stand left in place. */
export function stripHiddenCharacters(text: string): string {
  const { scan, anyHidden } = hiddenExpressions()
  if (!anyHidden.test(text)) return text
  return text.replace(scan, (_hidden, kept: string | undefined) => kept ?? '')
}

/** Whether `text` holds a hidden character where it is not part of what is written. */
export function hasHiddenCharacters(text: string): boolean {
  return stripHiddenCharacters(text) !== text
}
