import { type FieldError, TesseraError } from './tessera-error.js'

interface Envelope {
  message?: string
  data?: { errors?: FieldError[] } | null
}

/** The `data` of a successful envelope (docs/api.md R1.1), or the TesseraError of an error envelope (R1.2). */
export async function readEnvelope(response: Response): Promise<unknown> {
  let body: Envelope | null = null
  try {
    body = (await response.json()) as Envelope
  } catch {
    // not JSON (a proxy's error page): the status alone speaks
  }
  if (response.ok) return body?.data
  // the service sends seconds (R8.1); the HTTP-date form, which a proxy might send, is left out
  const retryAfter = response.headers.get('Retry-After')
  throw new TesseraError(
    response.status,
    body?.message ?? (response.statusText || `HTTP ${response.status}`),
    body?.data?.errors,
    undefined,
    retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : null,
  )
}
