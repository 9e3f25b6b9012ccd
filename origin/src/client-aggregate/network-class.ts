/**
 * The network class of a client (issue 13 §6, "similar networks"): its address truncated to
 * a /16 (IPv4) or a /32 (IPv6, an address block the size a regional ISP gets, RFC 6177's
 * assignments are /48–/64 per site), then an HMAC-SHA-256 keyed with a random secret that
 * lives only in this process. Clients of one access network usually share such a block, and
 * therefore the paths to the replicas; a block of 65,536 IPv4 addresses (or 2^96 IPv6 ones)
 * identifies nobody. The keyed hash keeps even the block out of the server's memory, its
 * statistics and its logs: without the secret (never written, never sent) a class id cannot
 * be traced back to a block, and a restart gives every block a new id (the aggregates start
 * over). IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) count as IPv4.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

export class NetworkClasses {
  private readonly secret = randomBytes(32);

  /** The opaque class id of `ip` (16 hex digits), or undefined for an address that is not one. */
  classOf(ip: string): string | undefined {
    const prefix = prefixOf(ip);
    return prefix === undefined ? undefined : createHmac('sha256', this.secret).update(prefix).digest('hex').slice(0, 16);
  }
}

/** "v4:a.b" or "v6:xxxx:xxxx" (the first 16 or 32 bits). */
export function prefixOf(ip: string): string | undefined {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  const v4 = mapped?.[1] ?? ip;
  if (isIPv4(v4)) return `v4:${v4.split('.').slice(0, 2).join('.')}`;
  if (!isIPv6(ip)) return undefined;
  const groups = expandIPv6(ip.split('%')[0] ?? ip);
  return groups === undefined ? undefined : `v6:${groups.slice(0, 2).join(':')}`;
}

/** The eight 16-bit groups of an IPv6 address, as 4-digit hex (a trailing dotted IPv4 part counts as two). */
function expandIPv6(ip: string): string[] | undefined {
  const [head = '', tail] = ip.split('::');
  const parse = (part: string): string[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group.padStart(4, '0').toLowerCase()];
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [((a << 8) | b).toString(16).padStart(4, '0'), ((c << 8) | d).toString(16).padStart(4, '0')];
        });
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  return [...left, ...new Array<string>(missing).fill('0000'), ...right];
}
