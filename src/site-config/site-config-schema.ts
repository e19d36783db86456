import { type Static, Type } from 'typebox'

// The single source of truth for spec 2.6. The TypeScript types are TypeBox's `Static` of these definitions, and
// schemas/site-config.schema.json is generated from `siteConfigSchemaDocument()` by
// scripts/generate-site-config-schema.mjs; test/site-config/site-config-schema.test.ts fails when the committed file
// differs, so the type, the validator and the published document cannot drift apart.
//
// Spec 2.6: every level accepts additional properties, so no object here sets `additionalProperties`, and nothing
// is required. TypeScript object types are open as well, so a value with extra keys is still a `SiteConfig`.

/** Canonical URI of the published schema document. */
export const SITE_CONFIG_SCHEMA_ID = 'https://tessera.dev/schemas/site-config.schema.json'

const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema'

/** The values spec 2.6 allows for `sitemap.changefreq` (those of the sitemaps.org protocol). */
export const SITEMAP_CHANGEFREQS = [
  'always',
  'hourly',
  'daily',
  'weekly',
  'monthly',
  'yearly',
  'never',
] as const

const CollapseControlSchema = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({ description: 'Offer a control that collapses and expands the panel.' }),
    ),
    defaultCollapsed: Type.Optional(Type.Boolean({ description: 'Show the panel collapsed at first.' })),
  },
  { title: 'Collapse control', description: 'How a panel (the sidebar, the table of contents) collapses.' },
)

const FooterLinkSchema = Type.Object(
  {
    text: Type.Optional(Type.String({ description: 'Text of the link.' })),
    url: Type.Optional(Type.String({ description: 'Target of the link.' })),
  },
  { title: 'Footer link', description: 'A text with a link, shown in the footer.' },
)

/** `$ref`s to the two shared definitions, typed as what they point to. */
function collapseControl(description: string) {
  return Type.Unsafe<Static<typeof CollapseControlSchema>>({ $ref: '#/$defs/collapseControl', description })
}
function footerLink(description: string) {
  return Type.Unsafe<Static<typeof FooterLinkSchema>>({ $ref: '#/$defs/footerLink', description })
}

/** The JSON Schema (2020-12) of the site presentation configuration object, spec 2.6. */
export const SiteConfigSchema = Type.Object(
  {
    breadcrumb: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ description: 'Show the breadcrumb trail.' })),
          showHome: Type.Optional(Type.Boolean({ description: 'Start the trail with the home page.' })),
        },
        { title: 'Breadcrumb', description: 'The breadcrumb trail above a page.' },
      ),
    ),
    reading: Type.Optional(
      Type.Object(
        {
          showTime: Type.Optional(Type.Boolean({ description: 'Show the estimated reading time.' })),
          showProgress: Type.Optional(Type.Boolean({ description: 'Show how far the reader has got.' })),
          fullscreen: Type.Optional(
            Type.Object(
              {
                enabled: Type.Optional(Type.Boolean({ description: 'Offer the full-screen reading mode.' })),
              },
              { title: 'Full-screen reading', description: 'The full-screen reading mode.' },
            ),
          ),
        },
        { title: 'Reading', description: 'Reading aids shown with a page.' },
      ),
    ),
    sidebar: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ description: 'Show the sidebar.' })),
          collapseControl: Type.Optional(collapseControl('How the sidebar collapses.')),
        },
        { title: 'Sidebar', description: 'The navigation sidebar.' },
      ),
    ),
    toc: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ description: 'Show the table of contents.' })),
          collapseControl: Type.Optional(collapseControl('How the table of contents collapses.')),
          maxLevel: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 6,
              description: 'Deepest heading level listed, from 1 (h1) to 6 (h6).',
            }),
          ),
          title: Type.Optional(Type.String({ description: 'Heading shown above the table of contents.' })),
        },
        { title: 'Table of contents', description: "The table of contents of a page's headings." },
      ),
    ),
    footer: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ description: 'Show the footer.' })),
          copyright: Type.Optional(Type.String({ description: 'Copyright notice.' })),
          beian: Type.Optional(footerLink('ICP filing (备案) number and its link.')),
          policeBeian: Type.Optional(footerLink('Public security filing (公安备案) number and its link.')),
          poweredBy: Type.Optional(Type.Boolean({ description: 'Show the "powered by" credit.' })),
        },
        { title: 'Footer', description: 'The page footer.' },
      ),
    ),
    sitemap: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ description: 'Publish a sitemap.' })),
          changefreq: Type.Optional(
            Type.Enum([...SITEMAP_CHANGEFREQS], {
              type: 'string',
              description: 'How often pages are expected to change (sitemap `changefreq`).',
            }),
          ),
          priority: Type.Optional(
            Type.Number({
              minimum: 0,
              maximum: 1,
              description: 'Priority of the pages relative to the rest of the site (sitemap `priority`).',
            }),
          ),
          exclude: Type.Optional(
            Type.Array(Type.String(), { description: 'Pages left out of the sitemap.' }),
          ),
        },
        { title: 'Sitemap', description: 'The sitemap published for search engines.' },
      ),
    ),
    feed: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ description: 'Publish a feed.' })),
          title: Type.Optional(Type.String({ description: 'Title of the feed.' })),
          description: Type.Optional(Type.String({ description: 'Description of the feed.' })),
          limit: Type.Optional(
            Type.Integer({ minimum: 1, description: 'Largest number of entries in the feed.' }),
          ),
        },
        { title: 'Feed', description: 'The subscription feed of the site.' },
      ),
    ),
  },
  {
    $schema: JSON_SCHEMA_2020_12,
    $id: SITE_CONFIG_SCHEMA_ID,
    title: 'Site presentation configuration',
    description:
      'How the documentation site presents its pages (spec 2.6). Every key is optional, and every object ' +
      'accepts properties beyond those listed.',
    $defs: { collapseControl: CollapseControlSchema, footerLink: FooterLinkSchema },
  },
)

/** The site presentation configuration object, spec 2.6. */
export type SiteConfig = Static<typeof SiteConfigSchema>
export type CollapseControl = Static<typeof CollapseControlSchema>
export type FooterLink = Static<typeof FooterLinkSchema>
export type BreadcrumbConfig = NonNullable<SiteConfig['breadcrumb']>
export type ReadingConfig = NonNullable<SiteConfig['reading']>
export type SidebarConfig = NonNullable<SiteConfig['sidebar']>
export type TocConfig = NonNullable<SiteConfig['toc']>
export type FooterConfig = NonNullable<SiteConfig['footer']>
export type SitemapConfig = NonNullable<SiteConfig['sitemap']>
export type SitemapChangefreq = (typeof SITEMAP_CHANGEFREQS)[number]
export type FeedConfig = NonNullable<SiteConfig['feed']>

/**
 * The schema as the JSON document published at schemas/site-config.schema.json and served by
 * GET /site-config/schema: plain JSON, each node starting with its identity and documentation for the reader.
 */
export function siteConfigSchemaDocument(): Record<string, unknown> {
  return readable(JSON.parse(JSON.stringify(SiteConfigSchema)))
}

const LEADING_KEYWORDS = ['$schema', '$id', '$ref', 'title', 'description', 'type']

/** A schema node with `title`, `description` and `type` first (TypeBox writes its options last). */
function readable(node: Record<string, unknown>): Record<string, unknown> {
  const keys = [...LEADING_KEYWORDS.filter((key) => key in node), ...Object.keys(node)]
  const result: Record<string, unknown> = {}
  for (const key of new Set(keys)) {
    const value = node[key] as Record<string, unknown>
    // `properties` and `$defs` map names to schemas: their own keys ("title" is a field of toc) keep their order
    if (key === 'properties' || key === '$defs') {
      result[key] = Object.fromEntries(
        Object.entries(value).map(([name, schema]) => [name, readable(schema as never)]),
      )
    } else {
      result[key] = key === 'items' ? readable(value) : value
    }
  }
  return result
}
