import { compile } from '@fastify/proxy-addr'

/**
 * Whether a peer address is a trusted proxy (TRUST_PROXY): `hop` counts back from the socket's peer (0) along
 * X-Forwarded-For. Fastify's `trustProxy` takes it as it is.
 */
export type TrustedProxy = (address: string, hop: number) => boolean

/**
 * TRUST_PROXY as the matcher Fastify and the connection guard both use: @fastify/proxy-addr's (the package Fastify
 * itself compiles `trustProxy` with), so both trust the same peers, IPv4-mapped IPv6 addresses taken as IPv4. Null
 * when the list is empty: nothing is trusted. The composition root (server.ts) compiles it once and hands the same
 * function to `buildApp` and to the connection guard.
 */
export function trustedProxies(entries: readonly string[]): TrustedProxy | null {
  return entries.length === 0 ? null : compile([...entries])
}
