import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { call } from '../support/http.js'
import { runCli, startProcess } from '../support/process.js'
import { useTempDir } from '../support/temp-dir.js'
import { startTestService, type TestService } from '../support/test-service.js'

const SITE = {
  toc: {
    enabled: true,
    maxLevel: 3,
    collapseControl: { enabled: true, defaultCollapsed: false, theme: 'dark' },
  },
  footer: { copyright: '© Ada', beian: { text: 'ICP 12345', url: 'https://beian.example', rel: 'nofollow' } },
  sitemap: { changefreq: 'weekly', priority: 0.5, exclude: ['/drafts/'] },
  custom: { anything: [1, 2, 3] },
}

const dir = useTempDir('site-config-service')

describe('SITE_CONFIG_FILE in the service', () => {
  let service: TestService
  beforeAll(async () => {
    const file = await dir.file('site.yaml', `# the documentation site\n${JSON.stringify(SITE, null, 2)}\n`)
    service = await startTestService(backends[0]!, { env: { SITE_CONFIG_FILE: file } })
  })
  afterAll(() => service.close())

  it('GET /site-config returns the validated object, extra properties at every level included', async () => {
    const reply = await call(service.app, 'GET', '/site-config')
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual(SITE)
  })

  it('GET /site-config/schema returns the schema as application/schema+json', async () => {
    const reply = await service.app.inject({ method: 'GET', url: '/site-config/schema' })
    expect(reply.statusCode).toBe(200)
    expect(reply.headers['content-type']).toMatch(/^application\/schema\+json/)
    expect(reply.json().$schema).toBe('https://json-schema.org/draft/2020-12/schema')
  })

  it('both are listed in the OpenAPI document', async () => {
    const document = (await call(service.app, 'GET', '/openapi.json')).body
    expect(document.paths['/site-config'].get.tags).toEqual(['site-config'])
    expect(Object.keys(document.paths['/site-config/schema'].get.responses['200'].content)).toEqual([
      'application/schema+json',
    ])
  })

  it('without SITE_CONFIG_FILE, GET /site-config is {}', async () => {
    const bare = await startTestService(backends[0]!)
    try {
      expect((await call(bare.app, 'GET', '/site-config')).body).toEqual({})
    } finally {
      await bare.close()
    }
  })
})

describe('tessera serve with an invalid SITE_CONFIG_FILE', () => {
  it('refuses to start, printing the lines `tessera site-config validate` prints', async () => {
    const file = await dir.file('broken.json', JSON.stringify({ toc: { maxLevel: 7 }, feed: { limit: 0 } }))
    const validate = await runCli(['site-config', 'validate', file])
    expect(validate.code).toBe(1)
    expect(validate.stderr).toBe(
      `${file}: /toc/maxLevel must be an integer from 1 to 6, got 7\n${file}: /feed/limit must be an integer of at least 1, got 0\n`,
    )
    const serve = await runCli(['serve'], { DATA_DIR: dir.path, SITE_CONFIG_FILE: file })
    expect(serve.code).toBe(1)
    expect(serve.stdout).toBe('')
    expect(serve.stderr).toBe(
      `tessera: SITE_CONFIG_FILE names a file that is not a valid site configuration:\n${validate.stderr}`,
    )
  })

  it('refuses to start on an unreadable file, and with WORKERS too', async () => {
    const missing = join(dir.path, 'missing.yaml')
    for (const env of [{}, { WORKERS: '2' }]) {
      const serve = await runCli(['serve'], { DATA_DIR: dir.path, SITE_CONFIG_FILE: missing, ...env })
      expect(serve.code).toBe(1)
      expect(serve.stderr).toBe(
        `tessera: SITE_CONFIG_FILE names a file that is not a valid site configuration:\n${missing}: cannot read the file: no such file\n`,
      )
    }
  })

  it('starts with a valid file and serves it', async () => {
    const file = await dir.file('site.json', JSON.stringify(SITE))
    const service = await startProcess({ DATA_DIR: dir.path, SITE_CONFIG_FILE: file })
    try {
      expect(await (await fetch(`${service.url}/site-config`)).json()).toEqual(SITE)
    } finally {
      await service.stop()
    }
  })
})

describe('tessera site-config validate (the installed command)', () => {
  it('exits 0 with "valid", 1 with one line per error, 2 for a parse error with line and column', async () => {
    const valid = await dir.file('ok.yml', 'toc:\n  maxLevel: 2\n')
    expect(await runCli(['site-config', 'validate', valid])).toEqual({
      code: 0,
      stdout: 'valid\n',
      stderr: '',
    })
    const invalid = await dir.file('bad.yml', 'sitemap:\n  changefreq: sometimes\n')
    const bad = await runCli(['site-config', 'validate', invalid])
    expect(bad.code).toBe(1)
    expect(bad.stderr.trim().split('\n')).toHaveLength(1)
    const unparsable = await dir.file('torn.json', '{\n  "toc": {\n    "maxLevel": 3,\n  }\n}\n')
    const torn = await runCli(['site-config', 'validate', unparsable])
    expect(torn.code).toBe(2)
    expect(torn.stderr).toMatch(/at line 4, column 3/)
  })
})
