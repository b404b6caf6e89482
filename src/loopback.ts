// Whether a host is this machine: one answer for the config (plain http is allowed only to a
// loopback base_url or webhook) and the metrics listener (a warning when it binds beyond).
import { BlockList, isIP } from 'node:net';

/**
 * Whether a host is this machine and nothing else: an IP literal in 127.0.0.0/8 or ::1 (bracketed
 * or not, also IPv4-mapped as ::ffff:127.x.y.z), or exactly "localhost". Decided by parsing the
 * address, never by its spelling: 127.attacker.example is a DNS name that can point anywhere.
 */
export function isLoopback(host: string): boolean {
  const bracketed = host.startsWith('[') && host.endsWith(']');
  const bare = bracketed ? host.slice(1, -1) : host;
  if (!bracketed && bare.toLowerCase() === 'localhost') return true;
  const family = isIP(bare);
  // Brackets hold an IPv6 address and nothing else.
  if (family === 0 || (bracketed && family !== 6)) return false;
  // BlockList compares parsed addresses and matches IPv4-mapped IPv6 against the IPv4 subnet.
  const loopback = new BlockList();
  loopback.addSubnet('127.0.0.0', 8, 'ipv4');
  loopback.addAddress('::1', 'ipv6');
  return loopback.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}
