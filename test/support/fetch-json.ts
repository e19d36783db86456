/** A JSON request over real HTTP: POST when there is a body, GET otherwise; the reply's status, body and time. */
export async function fetchJson(
  url: string,
  init: { method?: string; body?: unknown; token?: string } = {},
): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now()
  const headers: Record<string, string> = {}
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  if (init.token) headers.authorization = `Bearer ${init.token}`
  const response = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })
  return { status: response.status, body: await response.json(), ms: Date.now() - started }
}
