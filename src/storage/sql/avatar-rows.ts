import type { StoredAvatar } from '../stores.js'

/** The columns of an `avatars` row, in the order of avatarValues (migration 0006). */
export const AVATAR_COLUMNS = 'user_id, id, content_type, data, created_at'

/** The values of the avatar's row, in AVATAR_COLUMNS order. */
export function avatarValues(avatar: StoredAvatar): unknown[] {
  return [avatar.userId, avatar.id, avatar.contentType, avatar.data, avatar.createdAt]
}

/**
 * The image of a findAvatar row as a driver returns it: a Buffer from each of better-sqlite3 (BLOB), pg (BYTEA) and
 * mysql2 (MEDIUMBLOB); any other byte array is wrapped without a copy.
 */
export function toAvatarImage(row: Record<string, unknown>): Pick<StoredAvatar, 'contentType' | 'data'> {
  const data = row.data as Uint8Array
  return {
    contentType: row.content_type as StoredAvatar['contentType'],
    data: Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength),
  }
}
