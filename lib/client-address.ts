// The address a client is counted under, wherever fastbase counts per client: realtime's per-address
// shares (decision D89) and the rate limits. One client, one key. An IPv4 client seen through a dual-stack socket (`::ffff:127.0.0.1`) is its IPv4 address, and
// an IPv6 client is its /64: a host is routinely given a whole /64 and may pick any address in it, so
// a share per IPv6 address would be a share per connection for whoever asks for one.
import ipaddr from 'ipaddr.js'

const IPV6_HOST_PREFIX = 4 // 16-bit groups: /64

/** The key of `ip`'s share: an IPv4 address, an IPv6 /64 (`2001:db8:0:1::/64`), or `ip` itself when it is neither. */
export function clientAddress (ip: string): string {
  if (!ipaddr.isValid(ip)) return ip
  const parsed = ipaddr.process(ip)
  if (parsed.kind() === 'ipv4') return parsed.toString()
  const groups = parsed.toByteArray()
  const prefix: string[] = []
  for (let i = 0; i < IPV6_HOST_PREFIX * 2; i += 2) prefix.push(((groups[i] << 8) | groups[i + 1]).toString(16))
  return `${prefix.join(':')}::/64`
}
