import { get } from 'node:http'
import type { RunningService } from './process.js'

/** GET on a connection of its own, so that the cluster's scheduler picks a worker for each request. */
export function getOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
    }).on('error', reject)
  })
}

/** The process ids that logged a request line. */
export const requestPids = (service: RunningService) =>
  new Set(
    service.stdout
      .map((line) => JSON.parse(line))
      .filter((record) => record.msg === 'request')
      .map((record) => record.pid),
  )
