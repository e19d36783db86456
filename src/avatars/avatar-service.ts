import { randomBytes } from 'node:crypto'
import { createConcurrencyLimiter } from '../auth/concurrency-limiter.js'
import type { Clock } from '../clock.js'
import { AccessTokenInvalidError, describeCause } from '../errors.js'
import type { AvatarStore, UserStore } from '../storage/stores.js'
import { AVATAR_MAX_BYTES, type AvatarImage, reencodeAvatar } from './avatar-image.js'
import { downloadPicture, type PictureDownloadOptions } from './picture-download.js'

/** Avatars (docs/api.md §4.23): uploaded or copied from a provider, always re-encoded, stored in the SQL database. */
export interface AvatarService {
  /**
   * Re-encodes the file and makes it the account's avatar, removing the previous one; resolves with the new avatar's
   * id. Throws UnsupportedImageError (415) for a file that is not a JPEG, PNG or WebP image, AccessTokenInvalidError
   * (401, as GET /auth/me) when the account no longer exists, ServiceBusyError (503) when too many images wait.
   */
  upload(userId: string, bytes: Buffer): Promise<string>
  /** Removes the account's avatar; true when it had one. */
  remove(userId: string): Promise<boolean>
  /** The avatar with this id, or null. */
  get(id: string): Promise<{ contentType: string; data: Buffer } | null>
  /**
   * Copies a provider's picture at `url` into the account's avatar, through the same re-encoding as an upload: what a
   * provider sign-in calls for a new account, so that the picture is never hot-linked. Resolves with the avatar's id,
   * or with null, after a log line, when it cannot be had (not HTTPS, not public, too slow, over 2 MB, not an
   * image, the account gone, a store failing): never throws.
   */
  importPicture(userId: string, url: string): Promise<string | null>
}

/** The slice of a logger the service writes to (pino-compatible). */
export interface AvatarLog {
  warn(fields: Record<string, unknown>, message: string): void
}

export interface AvatarServiceDeps {
  avatars: AvatarStore
  users: Pick<UserStore, 'findById'>
  clock: Clock
  log: AvatarLog
  /** The deadline of a provider picture's download, redirects included; 5 seconds when absent. */
  fetchTimeoutMs?: number
  /** For tests only: how a provider picture's download connects (PictureDownloadOptions.connection). */
  pictureConnection?: PictureDownloadOptions['connection']
}

const DEFAULT_FETCH_TIMEOUT_MS = 5_000

/**
 * Images decoded at once, and waiting, per process. The largest images taken (avatar-image.ts) cost up to about
 * a second of one core and 135 MB while they decode, on one of libuv's four threads, which name lookups and file reads
 * share: four at once would take them all and near 550 MB. One at a time, sixteen waiting (their files, 2 MB at
 * most each, are all they hold), the rest refused with 503: with the memory given back after each image, a process
 * stays within that one decode of where it was (docs/api.md R4.23.6).
 */
const DECODE_CONCURRENCY = 1
const DECODE_QUEUE_LIMIT = 16

export function createAvatarService(deps: AvatarServiceDeps): AvatarService {
  const { avatars, users, clock, log } = deps
  const decoding = createConcurrencyLimiter({
    concurrency: DECODE_CONCURRENCY,
    queueLimit: DECODE_QUEUE_LIMIT,
  })
  const download: PictureDownloadOptions = {
    maxBytes: AVATAR_MAX_BYTES,
    timeoutMs: deps.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS,
    ...(deps.pictureConnection === undefined ? {} : { connection: deps.pictureConnection }),
  }

  /** Stores `image` as the account's avatar under a new id; throws AccessTokenInvalidError without the account. */
  const store = async (userId: string, image: AvatarImage): Promise<string> => {
    // a new id for each image: its URL is cached for ever (immutable), so an id never names two images
    const id = randomBytes(16).toString('hex')
    const stored = await avatars.put({ id, userId, ...image, createdAt: clock.now() })
    if (!stored) throw new AccessTokenInvalidError()
    return id
  }

  return {
    async upload(userId, bytes) {
      // an account deleted since its token was issued costs no decoding (the foreign key catches a later deletion)
      if ((await users.findById(userId)) === null) throw new AccessTokenInvalidError()
      // waiting in the line of its account: one account's uploads delay another's by one image, not by all of them
      const image = await decoding.run(() => reencodeAvatar(bytes), userId)
      return store(userId, image)
    },

    remove: (userId) => avatars.delete(userId),

    get: (id) => avatars.get(id),

    async importPicture(userId, url) {
      try {
        const bytes = await downloadPicture(url, download)
        return await store(userId, await decoding.run(() => reencodeAvatar(bytes), userId))
      } catch (error) {
        log.warn(
          { userId, pictureHost: hostOf(url), reason: describeCause(error) },
          'provider picture not copied; the avatar is left unset',
        )
        return null
      }
    },
  }
}

/** The host of a picture URL for the log (never the whole URL, which may carry a signature), or '' if none. */
function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return ''
  }
}
