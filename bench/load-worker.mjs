// The load generator, in its own process (forked by load.mjs): runs autocannon programmatically on the scenario the
// parent sends and sends back a summary. Scenarios are plain data, since functions cannot cross the IPC channel; the
// autocannon hooks are built here.
import autocannon from 'autocannon'
import { answerParent } from './child.mjs'

/**
 * @typedef {{ kind: 'get', path: string, tokens?: string[] }
 *   | { kind: 'login', email: string, password: string }
 *   | { kind: 'register', emailPrefix: string, password: string }
 *   | { kind: 'refresh', tokens: string[] }} Scenario
 * Tokens are dealt out one per connection: access tokens for `get` (the Authorization header), refresh tokens for
 * `refresh` (the start of that connection's chain).
 */

/**
 * @typedef {object} LoadRequest what load.mjs sends
 * @property {string} url the server's base URL
 * @property {number} connections
 * @property {number} durationSeconds
 * @property {number} timeoutSeconds
 * @property {Scenario} scenario
 */

/** @typedef {Pick<import('autocannon').Options, 'method' | 'headers' | 'body' | 'setupClient' | 'requests'>} Requests */

const JSON_HEADERS = { 'content-type': 'application/json' }

answerParent(run)

/**
 * @param {LoadRequest} options
 * @returns {Promise<import('./load.mjs').LoadResult>}
 */
async function run(options) {
  const { scenario } = options
  const chains = { broken: 0 }
  const result = await autocannon({
    // the path goes in the URL: autocannon has no top-level path option
    url: new URL(pathOf(scenario), options.url).href,
    connections: options.connections,
    duration: options.durationSeconds,
    timeout: options.timeoutSeconds,
    // over HTTPS (autocannon never verifies the certificate): the name the certificate is for, not an IP address
    ...(options.url.startsWith('https:') ? { servername: 'localhost' } : {}),
    ...requestsFor(scenario, chains),
  })
  const ok = result['2xx']
  return {
    durationSeconds: result.duration,
    requestsPerSecond: ok / result.duration,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    brokenChains: chains.broken,
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0]),
    ),
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.average,
    },
  }
}

/**
 * autocannon options for a scenario.
 * @param {Scenario} scenario
 * @param {{ broken: number }} chains
 * @returns {Requests}
 */
function requestsFor(scenario, chains) {
  switch (scenario.kind) {
    case 'get': {
      const tokens = scenario.tokens ?? []
      let next = 0
      return {
        method: 'GET',
        // one access token per connection, taken in turn from the pool
        setupClient:
          tokens.length === 0
            ? undefined
            : (client) => {
                client.setHeaders({ authorization: `Bearer ${tokens[next++ % tokens.length]}` })
              },
      }
    }
    case 'login':
      return {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ email: scenario.email, password: scenario.password }),
      }
    case 'register': {
      // distinct e-mails: a counter shared by every connection of this process
      let counter = 0
      return {
        requests: [
          {
            method: 'POST',
            path: '/auth/register',
            headers: JSON_HEADERS,
            setupRequest: (request) => {
              const email = `${scenario.emailPrefix}-${counter++}@register.example`
              return { ...request, body: JSON.stringify({ email, password: scenario.password }) }
            },
          },
        ],
      }
    }
    case 'refresh': {
      const tokens = scenario.tokens
      let next = 0
      return {
        // one chain per connection: each request sends the refresh token its connection's previous response returned
        setupClient: (client) => {
          const chain = { token: tokens[next++ % tokens.length], broken: false }
          client.setRequests([
            {
              method: 'POST',
              path: '/auth/refresh',
              headers: JSON_HEADERS,
              setupRequest: (request) => ({
                ...request,
                body: JSON.stringify({ refresh_token: chain.token }),
              }),
              onResponse: (status, body) => {
                const token = status === 200 ? refreshTokenOf(body) : null
                if (token !== null) chain.token = token
                else if (!chain.broken) {
                  chain.broken = true
                  chains.broken++
                }
              },
            },
          ])
        },
      }
    }
    default:
      throw new Error(`unknown scenario ${JSON.stringify(scenario)}`)
  }
}

/** @param {Scenario} scenario */
function pathOf(scenario) {
  switch (scenario.kind) {
    case 'get':
      return scenario.path
    case 'login':
      return '/auth/login'
    case 'register':
      return '/auth/register'
    case 'refresh':
      return '/auth/refresh'
  }
}

/** @param {string} body */
function refreshTokenOf(body) {
  try {
    const token = JSON.parse(body)?.data?.refresh_token
    return typeof token === 'string' ? token : null
  } catch {
    return null
  }
}
