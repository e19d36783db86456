import { type LookupAddress, lookup } from 'node:dns'
import type { IncomingMessage } from 'node:http'
import { request } from 'node:https'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/** How a provider's picture is fetched (docs/api.md §4.23): HTTPS only, a size cap and a deadline for all of it. */
export interface PictureDownloadOptions {
  /** The largest body taken; a longer one is abandoned as soon as it is seen to be longer. */
  maxBytes: number
  /** The deadline of the whole download, redirects included. */
  timeoutMs: number
  /**
   * For tests only: a certificate authority to trust besides the system's, and a name lookup to use instead of the
   * one that refuses private addresses (a test server listens on the loopback).
   */
  connection?: { ca?: string | Buffer; lookup?: LookupFunction }
}

/** Redirects followed at most: a picture URL that moves further is given up. */
const MAX_REDIRECTS = 3

/**
 * The body of a picture at `url`, or a rejection saying why not. A provider's picture URL is chosen by whoever holds
 * the account at the provider (a generic OpenID provider's `picture` claim is the user's to set), so the service must
 * not become a way to reach what only it can reach: every hop is HTTPS, to a host whose every address is public (no
 * loopback, private, link-local, shared or multicast address, checked on the address connected to, so a name that
 * resolves to one is refused too), at most three redirects, and the body is read up to `maxBytes` only.
 */
export async function downloadPicture(url: string, options: PictureDownloadOptions): Promise<Buffer> {
  const signal = AbortSignal.timeout(options.timeoutMs)
  let target = new URL(url)
  for (let hop = 0; ; hop++) {
    const response = await get(target, options, signal)
    const location = response.headers.location
    if (
      response.statusCode !== undefined &&
      response.statusCode >= 300 &&
      response.statusCode < 400 &&
      location
    ) {
      response.destroy()
      if (hop === MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`)
      target = new URL(location, target)
      continue
    }
    if (response.statusCode !== 200) {
      response.destroy()
      throw new Error(`status ${response.statusCode}`)
    }
    return readCapped(response, options.maxBytes)
  }
}

/** One GET of `target`, resolved with the response once its headers arrive. */
function get(target: URL, options: PictureDownloadOptions, signal: AbortSignal): Promise<IncomingMessage> {
  if (target.protocol !== 'https:') return Promise.reject(new Error(`${target.protocol} is not https:`))
  // an address literal is connected to without any lookup: it is checked here instead
  const literal = target.hostname.replace(/^\[(.*)\]$/, '$1')
  if (isIP(literal) !== 0 && options.connection?.lookup === undefined && !isPublicAddress(literal)) {
    return Promise.reject(new Error(`${literal} is not a public address`))
  }
  return new Promise((resolve, reject) => {
    const outgoing = request(target, {
      method: 'GET',
      signal,
      headers: { accept: 'image/jpeg, image/png, image/webp' },
      lookup: options.connection?.lookup ?? publicOnlyLookup,
      ...(options.connection?.ca === undefined ? {} : { ca: options.connection.ca }),
      // a connection of its own, closed with the download: nothing is kept alive towards a provider's host
      agent: false,
    })
    outgoing.once('response', resolve)
    outgoing.once('error', reject)
    outgoing.end()
  })
}

/** The body, refused once it is longer than `maxBytes` (by its Content-Length, or by what has arrived). */
async function readCapped(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length'])
  if (declared > maxBytes) {
    response.destroy()
    throw new Error(`Content-Length ${declared} is over ${maxBytes}`)
  }
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of response) {
    length += (chunk as Buffer).length
    if (length > maxBytes) {
      response.destroy()
      throw new Error(`body over ${maxBytes} bytes`)
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks, length)
}

/** The addresses no download may reach: this host, private networks, and every range that is not the Internet's. */
const NOT_PUBLIC = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  // an IPv4 address in IPv6 form (::ffff:127.0.0.1) needs no rule: BlockList checks it against the IPv4 ones
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6')
}

/** Whether `address` (IPv4 or IPv6 text) is one a download may connect to. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/**
 * The system's lookup, refusing a name any of whose addresses is not public: the address checked is the one
 * connected to, so a name cannot pass the check and then resolve elsewhere.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) {
      callback(error, '', 0)
      return
    }
    const refused = addresses.find(({ address }) => !isPublicAddress(address))
    const first = addresses[0]
    if (refused !== undefined || first === undefined) {
      callback(
        new Error(`${hostname} resolves to ${refused?.address ?? 'nothing'}, not a public address`),
        '',
        0,
      )
      return
    }
    if (options.all) callback(null, addresses)
    else callback(null, first.address, first.family)
  })
}
