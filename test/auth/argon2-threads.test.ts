import { afterEach, describe, expect, it } from 'vitest'
import { type Argon2Threads, createArgon2Threads } from '../../src/auth/argon2-threads.js'

const options = { algorithm: 2, memoryCost: 1024, timeCost: 1, parallelism: 1 }

describe('createArgon2Threads', () => {
  let threads: Argon2Threads
  afterEach(() => threads.close())

  it('hashes and verifies on its threads, many jobs at once', async () => {
    threads = createArgon2Threads(2)
    const hashes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => threads.hash(`password ${i}`, options)),
    )
    expect(new Set(hashes).size).toBe(6)
    const checks = await Promise.all(hashes.map((stored, i) => threads.verify(stored, `password ${i}`)))
    expect(checks).toEqual([true, true, true, true, true, true])
    expect(await threads.verify(hashes[0] as string, 'another password')).toBe(false)
  })

  it('starts no thread before start() or the first computation (the service starts them once it listens)', async () => {
    threads = createArgon2Threads(2)
    expect(threads.running).toBe(0)
    threads.start()
    expect(threads.running).toBe(2)
    threads.start()
    expect(threads.running).toBe(2)
    await threads.close()
    threads = createArgon2Threads(2)
    expect(await threads.hash('pw', options)).toMatch(/^\$argon2id\$/)
    expect(threads.running).toBe(2)
  })

  it('hashes bytes as well as strings', async () => {
    threads = createArgon2Threads(1)
    const stored = await threads.hash(new Uint8Array([1, 2, 3, 4]), options)
    expect(stored).toMatch(/^\$argon2id\$/)
  })

  it('rejects a job the library refuses, and keeps serving the others', async () => {
    threads = createArgon2Threads(1)
    await expect(threads.verify('not a PHC string', 'pw')).rejects.toThrow()
    await expect(threads.hash('pw', { ...options, memoryCost: 1 })).rejects.toThrow()
    expect(await threads.hash('pw', options)).toMatch(/^\$argon2id\$/)
  })

  it('fails the jobs of a thread that dies, and replaces the thread', async () => {
    threads = createArgon2Threads(1)
    const stored = await threads.hash('pw', options)
    // a million strings where the password goes: copying them in fills the thread's small heap (its
    // resourceLimits), which kills the thread before the job starts (one long string did not)
    const heapFilling = Array.from({ length: 1_000_000 }, (_, i) => `p${i}`) as unknown as string
    const killing = threads.verify(stored, heapFilling)
    const queuedBehind = threads.verify(stored, 'pw')
    await expect(killing).rejects.toThrow(/memory limit/)
    await expect(queuedBehind).rejects.toThrow(/memory limit/)
    expect(await threads.verify(stored, 'pw')).toBe(true)
  })

  it('refuses work once closed', async () => {
    threads = createArgon2Threads(1)
    await threads.close()
    await expect(threads.hash('pw', options)).rejects.toThrow('argon2 threads are closed')
  })
})
