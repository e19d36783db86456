import { isIPv4, isIPv6 } from 'node:net'

/**
 * The client that limits count by: the login limits (docs/api.md R8.4), the Argon2 queue's shares (R8.2) and the
 * connection caps (R8.7). An IPv4 address as it is, an IPv6 address by its /64 network (the allocation of one
 * subscriber, within which a client picks addresses at will), an IPv4-mapped IPv6 address as the IPv4 address.
 * Anything else is returned as it is.
 */
export function clientNetwork(address: string): string {
  if (!isIPv6Text(address)) return address
  const groups = ipv6Groups(address)
  return groups === null ? (mappedIPv4(address) ?? address) : `${groups.slice(0, 4).join(':')}::/64`
}

/**
 * Where a session was used, as `GET /auth/sessions` shows it (docs/api.md §4.11): coarse enough to name a network,
 * not a subscriber. An IPv4 address by its /24, an IPv6 address by its /48 (a site), an IPv4-mapped IPv6 address as
 * IPv4. Null for anything else.
 */
export function coarseNetwork(address: string): string | null {
  if (isIPv4(address)) return `${address.split('.').slice(0, 3).join('.')}.0/24`
  if (!isIPv6Text(address)) return null
  const groups = ipv6Groups(address)
  if (groups === null) return coarseNetwork(mappedIPv4(address) ?? '')
  const site = groups.slice(0, 3).join(':')
  return site === '0:0:0' ? '::/48' : `${site}::/48`
}

/**
 * isIPv6, without its cost for the address of most clients: Node compiles its IPv6 expression at its first call (some
 * 10 ms, paid by the first connection after a start), and an address without a colon is not IPv6.
 */
function isIPv6Text(address: string): boolean {
  return address.includes(':') && isIPv6(address)
}

/** The IPv4 address of an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`); null for any other. */
function mappedIPv4(address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address.toLowerCase().replace(/%.*$/, ''))
  return mapped?.[1] ?? null
}

/**
 * The eight groups of an IPv6 address, each in hexadecimal without leading zeros; null for an IPv4-mapped one,
 * which is an IPv4 client.
 */
function ipv6Groups(address: string): string[] | null {
  const plain = address.toLowerCase().replace(/%.*$/, '')
  if (mappedIPv4(plain) !== null) return null
  const hextets = (part: string) => {
    const groups = part === '' ? [] : part.split(':')
    const last = groups.at(-1)
    if (last !== undefined && isIPv4(last)) {
      const [a = 0, b = 0, c = 0, d = 0] = last.split('.').map(Number)
      groups.splice(-1, 1, ((a << 8) | b).toString(16), ((c << 8) | d).toString(16))
    }
    return groups
  }
  const [head = '', tail] = plain.split('::')
  const first = hextets(head)
  const last = tail === undefined ? [] : hextets(tail)
  const zeros = tail === undefined ? [] : Array<string>(8 - first.length - last.length).fill('0')
  return [...first, ...zeros, ...last].map((group) => Number.parseInt(group, 16).toString(16))
}
