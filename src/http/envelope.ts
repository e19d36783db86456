import type { AppError } from '../errors.js'

/** spec 2.5: the envelope of a successful auth response. */
export function success<T>(data: T): { code: 200; message: 'Success'; data: T } {
  return { code: 200, message: 'Success', data }
}

/** docs/api.md R1.2: errors use the same envelope, with the HTTP status as `code`. */
export function failure(error: AppError): { code: number; message: string; data: unknown } {
  return { code: error.statusCode, message: error.message, data: error.data }
}
