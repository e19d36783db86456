import { readFile } from 'node:fs/promises'
import { formatOfPath, parseSiteConfigText } from './parse-site-config-text.js'
import { SiteConfigFileError, SiteConfigInvalidError } from './site-config-errors.js'
import type { SiteConfig } from './site-config-schema.js'
import { validateSiteConfig } from './validate-site-config.js'

/**
 * Reads, parses and validates a site configuration file (spec 2.6). The extension decides the format: `.json` is
 * JSON, `.yaml` and `.yml` are YAML 1.2 (any case); any other file is read as JSON when it is valid JSON and as
 * YAML otherwise.
 *
 * @throws {SiteConfigFileError} when the file cannot be read or parsed; a parse error names line and column.
 * @throws {SiteConfigInvalidError} when the content breaks the schema; it carries every error.
 */
export async function loadSiteConfigFile(path: string): Promise<SiteConfig> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw SiteConfigFileError.unreadable(path, error)
  }
  const parsed = parseSiteConfigText(text, formatOfPath(path))
  if (!parsed.ok) throw SiteConfigFileError.unparsable(path, parsed.problem)
  const result = validateSiteConfig(parsed.value)
  if (!result.ok) throw new SiteConfigInvalidError(path, result.errors)
  return result.value
}
