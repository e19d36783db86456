import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { DataKeyError } from '../../src/errors.js'
import { createLogger } from '../../src/logger.js'
import { createFactorSecrets } from '../../src/mfa/factor-secrets.js'
import { openStores } from '../../src/storage/open-stores.js'

// docs/api.md R4.25.4: the data key in the store, sealed under AUTH_JWT_SECRET, sealed again under a new one while a
// previous one opens it; a key that no configured secret opens fails every use, and is never replaced.

const A = 'secret-a-0123456789-abcdefghijklmnopqrstuvwxyz0123'
const B = 'secret-b-0123456789-abcdefghijklmnopqrstuvwxyz0123'
const C = 'secret-c-0123456789-abcdefghijklmnopqrstuvwxyz0123'

describe('the second-factor data key', () => {
  const cleanups: Array<() => Promise<unknown>> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  async function store() {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-data-key-'))
    cleanups.push(() => rm(dir, { recursive: true, force: true }))
    const config = loadConfig(
      { NODE_ENV: 'test', DATABASE_URL: `sqlite:${dir}/app.db`, DATA_DIR: dir },
      { listens: false },
    )
    const stores = await openStores(config.storage, systemClock, createLogger('silent'))
    cleanups.push(() => stores.close())
    return stores.serviceKeys
  }

  it('opens under a rotated secret, is sealed again under it, and refuses a secret that never sealed it', async () => {
    const keys = await store()
    const underA = createFactorSecrets({ keys, secret: A, previousSecrets: [] })
    const sealed = await underA.seal('f'.repeat(32), 'JBSWY3DPEHPK3PXP')
    const digest = await underA.recoveryDigest('1234567890', 'ABCDEFGHJKMN')
    const storedUnderA = await keys.get('mfa')

    // B with A still accepted: the same data key, sealed again under B
    const during = createFactorSecrets({ keys, secret: B, previousSecrets: [A] })
    await during.ready()
    expect(await keys.get('mfa')).not.toBe(storedUnderA)
    expect(await during.open('f'.repeat(32), sealed)).toBe('JBSWY3DPEHPK3PXP')

    // B alone: still the same key
    const after = createFactorSecrets({ keys, secret: B, previousSecrets: [] })
    expect(await after.open('f'.repeat(32), sealed)).toBe('JBSWY3DPEHPK3PXP')
    expect(await after.recoveryDigest('1234567890', 'ABCDEFGHJKMN')).toBe(digest)
    // sealed for another factor: it does not open
    expect(await after.open('e'.repeat(32), sealed)).toBeNull()

    // C, which never sealed it: every use fails, and the stored key is left as it was
    const stored = await keys.get('mfa')
    const stranger = createFactorSecrets({ keys, secret: C, previousSecrets: [A] })
    await expect(stranger.ready()).rejects.toBeInstanceOf(DataKeyError)
    await expect(stranger.open('f'.repeat(32), sealed)).rejects.toBeInstanceOf(DataKeyError)
    expect(await keys.get('mfa')).toBe(stored)
  })

  it('of instances starting together on a new store, every one uses the one key stored first', async () => {
    const keys = await store()
    const instances = Array.from({ length: 5 }, () =>
      createFactorSecrets({ keys, secret: A, previousSecrets: [] }),
    )
    const digests = await Promise.all(
      instances.map((each) => each.recoveryDigest('1234567890', 'ABCDEFGHJKMN')),
    )
    expect(new Set(digests).size).toBe(1)
  })
})
