// Which addresses the service may call. Outgoing requests go where tenants (webhooks, attribute
// providers) and presented credentials (status lists) say, so without this policy whoever can store
// or present a URL makes the service reach its own network (SSRF): loopback, the LAN, the cloud
// metadata endpoint. Only public unicast addresses pass. An IPv6 address that carries an IPv4 one
// (mapped, compatible, SIIT, NAT64, 6to4) reaches that IPv4 address, so it is judged by it.
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/**
 * Where clouds hand out instance or workload credentials: the instance metadata service (AWS, Azure,
 * GCP and others; AWS's IPv6 form), the ECS task metadata endpoint, the EKS Pod Identity agent (IPv4
 * and IPv6) and Alibaba Cloud's metadata service.
 */
const METADATA_ADDRESSES = ['169.254.169.254', 'fd00:ec2::254', '169.254.170.2', '169.254.170.23', 'fd00:ec2::23', '100.100.100.200'].map(
  (m) => ipaddr.parse(m).toNormalizedString(),
);

const KINDS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a shared (CGNAT, RFC 6598) address',
  private: 'a private (RFC 1918) address',
  reserved: 'a reserved or documentation address',
  uniqueLocal: 'a unique-local (fc00::/7) address',
  rfc6052: 'a local-use NAT64 address',
  teredo: 'a Teredo tunnel address',
};

const v4 = (high: number, low: number): IPv4 => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);

/** The IPv4 address an IPv6 one leads to, if it embeds one. */
function embeddedIPv4(ip: IPv6): IPv4 | undefined {
  const [a, b, c, d, e, f, g, h] = ip.parts as [number, number, number, number, number, number, number, number];
  const zeros = a === 0 && b === 0 && c === 0 && d === 0;
  // ::ffff:a.b.c.d (mapped), and ::a.b.c.d (compatible: deprecated, but some stacks still route it) other than :: and ::1
  if (zeros && e === 0 && f === 0xffff) return v4(g, h);
  if (zeros && e === 0 && f === 0 && (g !== 0 || h > 1)) return v4(g, h);
  // ::ffff:0:a.b.c.d (SIIT, RFC 6145)
  if (zeros && e === 0xffff && f === 0) return v4(g, h);
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix, RFC 6052)
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return v4(g, h);
  // 2002:aabb:ccdd::/48 (6to4, RFC 3056)
  if (a === 0x2002) return v4(b, c);
  return undefined;
}

export interface NonPublic {
  /** As messages name it: 'a loopback address'. */
  kind: string;
  /** A cloud metadata endpoint: refused even where private destinations are allowed, as nothing legitimate lives there and credentials do. */
  metadata: boolean;
}

/** What kind of non-public address `address` is, or undefined for a public unicast one. `address` is an IP address as DNS or the URL parser gives it. */
export function nonPublic(address: string): NonPublic | undefined {
  const ip = ipaddr.parse(address);
  const inner = ip.kind() === 'ipv6' ? embeddedIPv4(ip as IPv6) : undefined;
  if (inner) {
    const found = nonPublic(inner.toString());
    return found && { ...found, kind: `the IPv6 form of ${inner}, ${found.kind}` };
  }
  if (METADATA_ADDRESSES.includes(ip.toNormalizedString())) return { kind: 'the cloud metadata address', metadata: true };
  const range = ip.range();
  if (range === 'unicast') return undefined;
  return { kind: KINDS[range] ?? `a special-purpose (${range}) address`, metadata: false };
}

/** The IP address a URL names as its host, without IPv6 brackets; undefined when the host is a name. */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname;
  if (host.startsWith('[')) return host.slice(1, -1);
  // The URL parser has already turned every numeric IPv4 form (2130706433, 0x7f000001, 0177.0.0.1, 127.1) into dotted decimal.
  return ipaddr.IPv4.isValidFourPartDecimal(host) ? host : undefined;
}
