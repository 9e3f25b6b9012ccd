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
 *
 * The reporter id, which k counts distinct (client-aggregates.ts), is made the same way from
 * the whole IPv4 address or the IPv6 /64 (one site's subnet, RFC 6177; a host picks any
 * address inside its /64 freely, so a finer id would let one host count many times), as a
 * 48-bit number. Clients behind one NAT address count as one reporter (an undercount, which
 * only delays publication).
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

  /** The opaque reporter id of `ip` (a 48-bit number), or undefined for an address that is not one. */
  reporterOf(ip: string): number | undefined {
    const prefix = reporterPrefixOf(ip);
    return prefix === undefined ? undefined : createHmac('sha256', this.secret).update(prefix).digest().readUIntBE(0, 6);
  }
}

/** "v4:a.b" or "v6:xxxx:xxxx" (the first 16 or 32 bits). */
export function prefixOf(ip: string): string | undefined {
  const address = parseAddress(ip);
  if (address === undefined) return undefined;
  return 'v4' in address ? `v4:${address.v4.slice(0, 2).join('.')}` : `v6:${address.v6.slice(0, 2).join(':')}`;
}

/** "r4:a.b.c.d" (the whole address) or "r6:xxxx:xxxx:xxxx:xxxx" (the /64). */
export function reporterPrefixOf(ip: string): string | undefined {
  const address = parseAddress(ip);
  if (address === undefined) return undefined;
  return 'v4' in address ? `r4:${address.v4.join('.')}` : `r6:${address.v6.slice(0, 4).join(':')}`;
}

/** The four IPv4 parts (IPv4-mapped IPv6 counts as IPv4) or the eight IPv6 groups of `ip`. */
function parseAddress(ip: string): { v4: string[] } | { v6: string[] } | undefined {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  const v4 = mapped?.[1] ?? ip;
  if (isIPv4(v4)) return { v4: v4.split('.') };
  if (!isIPv6(ip)) return undefined;
  const groups = expandIPv6(ip.split('%')[0] ?? ip);
  return groups === undefined ? undefined : { v6: groups };
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
