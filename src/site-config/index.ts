// The site presentation configuration (spec 2.6): its schema and type, validation and the file loader. The
// `tessera site-config` command (src/commands/site-config.ts) is exported beside it by src/index.ts.

export { loadSiteConfigFile } from './load-site-config-file.js'
export type { SiteConfigFormat } from './parse-site-config-text.js'
export { SiteConfigFileError, SiteConfigInvalidError } from './site-config-errors.js'
export {
  type BreadcrumbConfig,
  type CollapseControl,
  type FeedConfig,
  type FooterConfig,
  type FooterLink,
  type ReadingConfig,
  SITE_CONFIG_SCHEMA_ID,
  SITEMAP_CHANGEFREQS,
  type SidebarConfig,
  type SiteConfig,
  SiteConfigSchema,
  type SitemapChangefreq,
  type SitemapConfig,
  siteConfigSchemaDocument,
  type TocConfig,
} from './site-config-schema.js'
export {
  type SiteConfigError,
  type SiteConfigValidation,
  validateSiteConfig,
} from './validate-site-config.js'
