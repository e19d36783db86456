import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Argon2Threads, createArgon2Threads } from '../../src/auth/argon2-threads.js'
import { createConcurrencyLimiter } from '../../src/auth/concurrency-limiter.js'
import { createPasswordHasher } from '../../src/auth/password-hasher.js'

const cheap = { memoryKiB: 1024, timeCost: 1, parallelism: 1 }
const limiter = () => createConcurrencyLimiter({ concurrency: 2, queueLimit: 10 })

describe('createPasswordHasher', () => {
  let threads: Argon2Threads
  beforeAll(() => {
    threads = createArgon2Threads(2)
  })
  afterAll(() => threads.close())

  it('hashes with Argon2id at the configured cost and a random salt', async () => {
    const hasher = createPasswordHasher(cheap, limiter(), threads)
    const first = await hasher.hash('correct horse')
    const second = await hasher.hash('correct horse')
    expect(first).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$/)
    expect(first).not.toBe(second)
    expect(await hasher.verify(first, 'correct horse')).toBe(true)
    expect(await hasher.verify(first, 'correct horsE')).toBe(false)
  })

  it('uses the OWASP cost (m=19456 KiB, t=2, p=1) when given the defaults', async () => {
    const hasher = createPasswordHasher({ memoryKiB: 19456, timeCost: 2, parallelism: 1 }, limiter(), threads)
    expect(await hasher.hash('correct horse')).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
  })

  it('verifyDummy costs a verification and is always false', async () => {
    const hasher = createPasswordHasher(cheap, limiter(), threads)
    expect(await hasher.verifyDummy('anything at all')).toBe(false)
    expect(await hasher.verifyDummy('')).toBe(false)
  })

  it('computes its dummy hash at prepare() or the first unknown e-mail, not when it is made', async () => {
    const hashed: unknown[] = []
    const recording = {
      hash: (password: string | Uint8Array, options: Parameters<Argon2Threads['hash']>[1]) => {
        hashed.push(password)
        return threads.hash(password, options)
      },
      verify: (stored: string, password: string) => threads.verify(stored, password),
    }
    const prepared = createPasswordHasher(cheap, limiter(), recording)
    expect(hashed).toHaveLength(0)
    prepared.prepare()
    prepared.prepare()
    expect(hashed).toHaveLength(1)
    expect(await prepared.verifyDummy('pw')).toBe(false)
    expect(hashed).toHaveLength(1)

    const unprepared = createPasswordHasher(cheap, limiter(), recording)
    expect(await unprepared.verifyDummy('pw')).toBe(false)
    expect(await unprepared.verifyDummy('pw')).toBe(false)
    expect(hashed).toHaveLength(2)
  })

  it('needsRehash when the stored hash has other parameters', async () => {
    const old = await createPasswordHasher(cheap, limiter(), threads).hash('pw')
    const hasherFor = (params: typeof cheap) => createPasswordHasher(params, limiter(), threads)
    expect(hasherFor(cheap).needsRehash(old)).toBe(false)
    expect(hasherFor({ ...cheap, memoryKiB: 2048 }).needsRehash(old)).toBe(true)
    expect(hasherFor({ ...cheap, timeCost: 2 }).needsRehash(old)).toBe(true)
    expect(hasherFor({ ...cheap, parallelism: 2 }).needsRehash(old)).toBe(true)
    expect(hasherFor(cheap).needsRehash('not a hash')).toBe(true)
  })

  it('runs every computation through the limiter', async () => {
    const counting = limiter()
    let peak = 0
    const observed = {
      run<T>(task: () => Promise<T>) {
        return counting.run(async () => {
          peak = Math.max(peak, counting.stats().running)
          return task()
        })
      },
      stats: counting.stats,
    }
    const hasher = createPasswordHasher(cheap, observed, threads)
    await Promise.all(Array.from({ length: 8 }, () => hasher.hash('pw')))
    expect(peak).toBe(2)
  })
})
