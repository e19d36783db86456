import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A fresh, empty place to keep the service's data, and how to remove it again. */
export interface BackendInstance {
  /** Variables that point the service at it (DATABASE_URL, REDIS_URL, DATA_DIR). */
  env: Record<string, string>
  teardown(): Promise<void>
}

/** A storage configuration the auth suites run against. */
export interface Backend {
  name: string
  setup(): Promise<BackendInstance>
}

const sqlite: Backend = {
  name: 'sqlite',
  async setup() {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-test-'))
    return {
      env: { DATABASE_URL: `sqlite:${dir}/app.db`, DATA_DIR: dir },
      teardown: () => rm(dir, { recursive: true, force: true }),
    }
  },
}

/** Every backend this machine can run; the suites are parametrized over this list. */
export const backends: Backend[] = [sqlite]
