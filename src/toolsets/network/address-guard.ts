/**
 * Why an address is not one a network tool may reach on its own: loopback, private (RFC 1918), shared
 * (CGNAT, RFC 6598), link-local, cloud metadata, unique-local IPv6, unspecified, multicast, and the rest of the
 * special-purpose blocks. `null` for a public unicast address.
 */
export type BlockedRange =
  | "loopback"
  | "private"
  | "cgnat"
  | "link_local"
  | "metadata"
  | "unique_local"
  | "unspecified"
  | "multicast"
  | "reserved";

type V4Range = readonly [base: number, bits: number, range: BlockedRange];

const V4: readonly V4Range[] = [
  [ipv4([169, 254, 169, 254]), 32, "metadata"],
  [ipv4([0, 0, 0, 0]), 32, "unspecified"],
  [ipv4([0, 0, 0, 0]), 8, "reserved"],
  [ipv4([10, 0, 0, 0]), 8, "private"],
  [ipv4([100, 64, 0, 0]), 10, "cgnat"],
  [ipv4([127, 0, 0, 0]), 8, "loopback"],
  [ipv4([169, 254, 0, 0]), 16, "link_local"],
  [ipv4([172, 16, 0, 0]), 12, "private"],
  [ipv4([192, 0, 0, 0]), 24, "reserved"],
  [ipv4([192, 0, 2, 0]), 24, "reserved"],
  [ipv4([192, 88, 99, 0]), 24, "reserved"],
  [ipv4([192, 168, 0, 0]), 16, "private"],
  [ipv4([198, 18, 0, 0]), 15, "reserved"],
  [ipv4([198, 51, 100, 0]), 24, "reserved"],
  [ipv4([203, 0, 113, 0]), 24, "reserved"],
  [ipv4([224, 0, 0, 0]), 4, "multicast"],
  [ipv4([240, 0, 0, 0]), 4, "reserved"],
];

/** An IPv4 address's four octets as one unsigned 32-bit number, for prefix comparisons. */
function ipv4([a, b, c, d]: readonly [number, number, number, number]): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function parseV4(address: string): number | null {
  const parts = address.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255))
    return null;
  return ipv4(parts.map(Number) as [number, number, number, number]);
}

function classifyV4(value: number): BlockedRange | null {
  for (const [base, bits, range] of V4) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((value & mask) >>> 0 === base) return range;
  }
  return null;
}

/** Eight 16-bit groups of an IPv6 address (an embedded dotted quad allowed, a zone id dropped), or null. */
function parseV6(address: string): number[] | null {
  let text = address.replace(/%.*$/, "");
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseV4(dotted[1]!);
    if (v4 === null) return null;
    text = `${text.slice(0, dotted.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const known = head.length + rest.length;
  if (known > 8 || (halves.length === 1 && known !== 8) || (halves.length === 2 && known === 8)) return null;
  const all = [...head, ...new Array<string>(8 - known).fill("0"), ...rest];
  const out: number[] = [];
  for (const group of all) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
    out.push(Number.parseInt(group, 16));
  }
  return out;
}

function classifyV6(groups: number[]): BlockedRange | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const v4 = ((g6 << 16) | g7) >>> 0;
  if (groups.every((group) => group === 0)) return "unspecified";
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 1)
    return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d): the IPv4 rules.
  if (
    g0 === 0 &&
    g1 === 0 &&
    g2 === 0 &&
    g3 === 0 &&
    ((g4 === 0 && (g5 === 0xffff || g5 === 0)) || (g4 === 0xffff && g5 === 0))
  )
    return classifyV4(v4) ?? (g5 === 0 && g4 === 0 ? "reserved" : null);
  // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyV4(v4);
  if (
    g0 === 0xfd00 &&
    g1 === 0x0ec2 &&
    g2 === 0 &&
    g3 === 0 &&
    g4 === 0 &&
    g5 === 0 &&
    g6 === 0 &&
    g7 === 0x254
  )
    return "metadata";
  if ((g0 & 0xfe00) === 0xfc00) return "unique_local";
  if ((g0 & 0xffc0) === 0xfe80) return "link_local";
  if ((g0 & 0xffc0) === 0xfec0) return "reserved"; // deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x2001 && g1 === 0x0db8) return "reserved"; // documentation
  if (g0 === 0x2002) return classifyV4(((g1 << 16) | g2) >>> 0); // 6to4 embeds an IPv4 address
  return null;
}

/**
 * The blocked range an IP address (v4 or v6, as `net` or a resolver gives it) falls in, or `null` when it is a
 * public unicast address. Anything that is not an IP address is `reserved`: a caller never lets it through.
 */
export function blockedRangeOf(address: string): BlockedRange | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  // `net` on first use: importing Keel need not load Node's network stack.
  const family = process.getBuiltinModule("node:net").isIP(bare.replace(/%.*$/, ""));
  if (family === 4) return classifyV4(parseV4(bare)!);
  if (family === 6) {
    const groups = parseV6(bare);
    return groups === null ? "reserved" : classifyV6(groups);
  }
  return "reserved";
}
