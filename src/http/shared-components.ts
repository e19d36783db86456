import { STATUS_CODES } from 'node:http'

/** An OpenAPI document as JSON, loosely: only the parts the transformation reads are named. */
interface Document {
  paths?: Record<string, Record<string, { responses?: Record<string, Response> }>>
  components?: { responses?: Record<string, Response>; headers?: Record<string, unknown> }
  [key: string]: unknown
}
interface Response {
  headers?: Record<string, unknown>
  [key: string]: unknown
}

/**
 * The served document, with what several places of it define alike defined once under `components` and referred to
 * (`$ref`) where it is used: whole answers under components.responses (the 401, 403, 413, 415 and 500 that most
 * operations answer word for word), then response headers under components.headers (the Cache-Control and
 * rate-limit headers with their descriptions). Written out in every operation they were two thirds of the
 * document's bytes, which every request of /openapi.json sends (docs/api.md R8.8's flood asks for it 9,600 times).
 * What is defined in one place stays there. The route schemas keep their own copies: Fastify's serializer reads
 * them, and it follows no `$ref` to a response or a header.
 */
export function withSharedComponents<T extends object>(document: T): T {
  const copy = structuredClone(document) as Document
  shareResponses(copy)
  shareHeaders(copy)
  return copy as T
}

/**
 * Each answer that several operations define alike, moved to components.responses under its status's name
 * (`Unauthorized`, `InternalServerError`), with -2, -3 … for another answer of the same status or a name taken.
 */
function shareResponses(document: Document): void {
  const operations = Object.values(document.paths ?? {}).flatMap((item) => Object.values(item))
  moveShared(
    document,
    'responses',
    operations.map((operation) => operation.responses ?? {}),
    statusName,
  )
}

/**
 * Each response header that several answers (the operations' own and those of components.responses) define alike,
 * moved to components.headers under the header's own name, with -2, -3 … for another definition of the same header.
 */
function shareHeaders(document: Document): void {
  const responses = [
    ...Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item).flatMap((operation) => Object.values(operation.responses ?? {})),
    ),
    ...Object.values(document.components?.responses ?? {}),
  ]
  moveShared(
    document,
    'headers',
    responses.map((response) => response.headers ?? {}),
    (header) => header,
  )
}

/**
 * Moves each value that the `maps` hold alike (the same JSON) more than once into the document's components of that
 * `kind`, named by `nameOf` its key in the first map that holds it, and leaves a `$ref` to
 * `#/components/<kind>/<name>` in its place.
 */
function moveShared(
  document: Document,
  kind: 'responses' | 'headers',
  maps: Array<Record<string, unknown>>,
  nameOf: (key: string) => string,
): void {
  const components: Record<string, unknown> = { ...document.components?.[kind] }
  const uses = new Map<string, number>()
  for (const map of maps) {
    for (const value of Object.values(map)) {
      const text = JSON.stringify(value)
      uses.set(text, (uses.get(text) ?? 0) + 1)
    }
  }
  const shared = new Map<string, string>()
  for (const map of maps) {
    for (const [key, value] of Object.entries(map)) {
      const text = JSON.stringify(value)
      if ((uses.get(text) ?? 0) < 2) continue
      let name = shared.get(text)
      if (name === undefined) {
        name = uniqueName(nameOf(key), components)
        components[name] = value
        shared.set(text, name)
      }
      map[key] = { $ref: `#/components/${kind}/${name}` }
    }
  }
  if (shared.size > 0) document.components = { ...document.components, [kind]: components }
}

/** `401` → `Unauthorized`: the status's reason phrase without its spaces (a component name is `[a-zA-Z0-9._-]+`). */
const statusName = (status: string): string =>
  (STATUS_CODES[Number(status)] ?? `Status ${status}`).replace(/[^a-zA-Z0-9]/g, '')

/** `name`, or `name-2`, `name-3` … : the first that `taken` does not hold. */
function uniqueName(name: string, taken: Record<string, unknown>): string {
  let unique = name
  for (let n = 2; unique in taken; n++) unique = `${name}-${n}`
  return unique
}
