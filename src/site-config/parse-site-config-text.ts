import { extname } from 'node:path'
import { parseDocument } from 'yaml'
import { findJsonSyntaxError } from './json-syntax-error.js'

/** How a site configuration file is written: decided by its extension, `auto` for any other extension. */
export type SiteConfigFormat = 'json' | 'yaml' | 'auto'

/** Why a text could not be parsed, with the place when the parser gives one (both 1-based). */
export interface SyntaxProblem {
  format: 'JSON' | 'YAML'
  message: string
  line?: number
  column?: number
}

export type ParseResult = { ok: true; value: unknown } | { ok: false; problem: SyntaxProblem }

/** The format a file name implies: `.json`, `.yaml` or `.yml` (any case), else `auto`. */
export function formatOfPath(path: string): SiteConfigFormat {
  const extension = extname(path).toLowerCase()
  if (extension === '.json') return 'json'
  if (extension === '.yaml' || extension === '.yml') return 'yaml'
  return 'auto'
}

/**
 * Parses a configuration text into plain data. `auto` reads a valid JSON text exactly as JSON.parse does and
 * anything else as YAML (a superset of JSON), reporting the YAML error when both fail.
 */
export function parseSiteConfigText(text: string, format: SiteConfigFormat): ParseResult {
  if (format === 'json') return parseJson(text)
  if (format === 'yaml') return parseYaml(text)
  const json = parseJson(text)
  return json.ok ? json : parseYaml(text)
}

function parseJson(text: string): ParseResult {
  // editors on Windows may save a byte order mark, which JSON.parse rejects
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text
  try {
    return { ok: true, value: JSON.parse(body) }
  } catch (error) {
    const found = findJsonSyntaxError(body)
    if (!found) return { ok: false, problem: { format: 'JSON', message: (error as Error).message } }
    return {
      ok: false,
      problem: { format: 'JSON', message: found.message, ...lineColumn(body, found.offset) },
    }
  }
}

function parseYaml(text: string): ParseResult {
  // YAML 1.2 core schema (the default): `yes`, `on` and `0777` stay strings, duplicate keys are errors
  const document = parseDocument(text, { prettyErrors: false })
  const [error] = document.errors
  if (error) {
    const message = error.message.replace(/^[A-Z](?=[a-z ])/, (first) => first.toLowerCase())
    return { ok: false, problem: { format: 'YAML', message, ...lineColumn(text, error.pos[0]) } }
  }
  try {
    return { ok: true, value: document.toJS() }
  } catch (failure) {
    // too many alias expansions (a "billion laughs" document) and the like: no single place to point at
    return { ok: false, problem: { format: 'YAML', message: (failure as Error).message } }
  }
}

/** 1-based line and column of a UTF-16 offset; the column counts characters (code points), as editors do. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset)
  const lineStart = before.lastIndexOf('\n') + 1
  let line = 1
  for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line++
  return { line, column: [...before.slice(lineStart)].length + 1 }
}
