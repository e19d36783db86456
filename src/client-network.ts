import { isIPv4, isIPv6 } from 'node:net'

/**
 * The client that limits count by: the login limits (docs/api.md R8.4), the Argon2 queue's shares (R8.2) and the
 * connection caps (R8.7). An IPv4 address as it is, an IPv6 address by its /64 network (the allocation of one subscriber, within which a client picks addresses at
 * will), an IPv4-mapped IPv6 address as the IPv4 address. Anything else is returned as it is.
 */
export function clientNetwork(address: string): string {
  if (!isIPv6(address)) return address
  const plain = address.toLowerCase().replace(/%.*$/, '')
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain)
  if (mapped?.[1] !== undefined) return mapped[1]
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
  const full = [...first, ...zeros, ...last]
  return `${full
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`
}
