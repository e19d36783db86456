/**
 * The API's snake_case fields as the client's camelCase ones (`email_verified` as `emailVerified`), tokens left out:
 * the client keeps them, and never returns them.
 */
export function camelCased(data: object): Record<string, unknown> {
  const result: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(data)) {
    if (!key.endsWith('_token'))
      result[key.replace(/_(.)/g, (_, letter: string) => letter.toUpperCase())] = value
  }
  return result
}
