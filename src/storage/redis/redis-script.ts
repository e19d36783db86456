import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

/** The slice of ioredis that runs scripts. */
export type ScriptCommands = Pick<Redis, 'evalsha' | 'eval'>

/** A Lua script, which Redis runs atomically. */
export interface RedisScript {
  /** Runs it by its digest; the script itself is sent only when the server does not have it yet (NOSCRIPT). */
  run(redis: ScriptCommands, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>
}

export function createRedisScript(source: string): RedisScript {
  const sha = createHash('sha1').update(source).digest('hex')
  return {
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args)
      } catch (error) {
        if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error
        return redis.eval(source, keys.length, ...keys, ...args)
      }
    },
  }
}
