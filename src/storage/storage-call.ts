import { StorageError } from '../errors.js'

/** Runs a storage operation, turning any driver failure into a StorageError that names the operation. */
export async function storageCall<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw new StorageError(`${operation} failed`, { cause: error })
  }
}
