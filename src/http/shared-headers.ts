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
 * The document with each response header that several answers define alike defined once, under components.headers,
 * and referred to (`$ref`) where it is used. Most answers carry the same Cache-Control and rate-limit headers with
 * their descriptions: written out in every one of them they were two fifths of the document's bytes, which every
 * request of /openapi.json sends (docs/api.md R8.8's flood asks for it). A header defined in one place stays there.
 * The names in components.headers are the headers' own, with -2, -3 … for another definition of the same header.
 */
export function withSharedHeaders<T extends object>(document: T): T {
  const copy = structuredClone(document) as Document
  const responses = [
    ...Object.values(copy.paths ?? {}).flatMap((item) =>
      Object.values(item).flatMap((operation) => Object.values(operation.responses ?? {})),
    ),
    ...Object.values(copy.components?.responses ?? {}),
  ]
  const uses = new Map<string, number>()
  for (const response of responses) {
    for (const definition of Object.values(response.headers ?? {})) {
      const key = JSON.stringify(definition)
      uses.set(key, (uses.get(key) ?? 0) + 1)
    }
  }
  const shared = new Map<string, string>()
  const components: Record<string, unknown> = { ...copy.components?.headers }
  for (const response of responses) {
    for (const [header, definition] of Object.entries(response.headers ?? {})) {
      const key = JSON.stringify(definition)
      if ((uses.get(key) ?? 0) < 2) continue
      let name = shared.get(key)
      if (name === undefined) {
        name = header
        for (let n = 2; name in components; n++) name = `${header}-${n}`
        components[name] = definition
        shared.set(key, name)
      }
      ;(response.headers as Record<string, unknown>)[header] = { $ref: `#/components/headers/${name}` }
    }
  }
  if (shared.size > 0) copy.components = { ...copy.components, headers: components }
  return copy as T
}
