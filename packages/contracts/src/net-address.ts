/**
 * SIP signalling addresses (host[:port]) and peer source addresses (IPs and CIDR ranges), parsed
 * the same way by the console's form and by the server, so both refuse the same input with the
 * same words. Pure functions: the browser runs them too.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface HostPort {
  /** Lower-case host name, dotted IPv4, or IPv6 without brackets. */
  host: string;
  /** Null when not given: SIP then uses the transport's default (5060) or DNS SRV. */
  port: number | null;
  isIpv6: boolean;
}

export interface IpRange {
  family: 4 | 6;
  /** Canonical text: the address alone for a single host, `address/prefix` for a range. */
  text: string;
  address: string;
  prefix: number;
}

const IPV4_PART = /^(0|[1-9]\d{0,2})$/;

/** The 4 bytes of a dotted IPv4 address, or null. Leading zeros are refused (octal in some tools). */
export function parseIpv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!IPV4_PART.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    bytes.push(n);
  }
  return bytes;
}

/** The 16 bytes of an IPv6 address (with `::` and an optional dotted IPv4 tail), or null. */
export function parseIpv6(text: string): number[] | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.length > 45) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (half: string): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (const [i, piece] of pieces.entries()) {
      if (piece.includes('.')) {
        // Only the last piece may be the IPv4 tail (::ffff:192.0.2.1).
        const v4 = i === pieces.length - 1 ? parseIpv4(piece) : null;
        if (!v4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return null;
        out.push(Number.parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!head || !tail) return null;
  let groups: number[];
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length;
    // `::` stands for at least one zero group.
    if (missing < 1) return null;
    groups = [...head, ...Array<number>(missing).fill(0), ...tail];
  } else {
    groups = head;
  }
  if (groups.length !== 8) return null;
  return groups.flatMap((g) => [g >> 8, g & 255]);
}

/** RFC 5952 text: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
export function formatIpv6(bytes: number[]): string {
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i]! << 8) | bytes[2 * i + 1]!);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

const HOST_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

function hostPortFailure(label: string, reason: string): Parsed<HostPort> {
  return { ok: false, reason: `${label}：${reason}` };
}

/**
 * `host[:port]` as a SIP trunk's registrar, proxy or peer is written: a host name, a dotted IPv4
 * address or a bracketed IPv6 address, and an optional port. `label` names the field in messages.
 */
export function parseHostPort(raw: string, label: string): Parsed<HostPort> {
  const text = raw.trim();
  const shape = '格式应为 主机[:端口]，如 sip.example.com 或 203.0.113.10:5060';
  if (text === '') return hostPortFailure(label, `请填写，${shape}`);
  if (/^sips?:/i.test(text)) return hostPortFailure(label, `请去掉 sip: 前缀，${shape}`);
  if (text.length > 260) return hostPortFailure(label, shape);
  let host: string;
  let portText: string | undefined;
  let isIpv6 = false;
  if (text.startsWith('[')) {
    const match = /^\[([^\]]+)\](?::([^:]*))?$/.exec(text);
    const bytes = match ? parseIpv6(match[1]!) : null;
    if (!match || !bytes) return hostPortFailure(label, shape);
    host = formatIpv6(bytes);
    portText = match[2];
    isIpv6 = true;
  } else {
    const colons = text.split(':').length - 1;
    if (colons > 1) {
      return parseIpv6(text)
        ? hostPortFailure(label, 'IPv6 地址须写在方括号内，如 [2001:db8::1]:5060')
        : hostPortFailure(label, shape);
    }
    [host, portText] = text.split(':') as [string, string | undefined];
    host = host.toLowerCase();
    if (/^[\d.]+$/.test(host)) {
      if (!parseIpv4(host)) return hostPortFailure(label, `${host} 不是有效的 IPv4 地址`);
    } else if (host.length > 253 || !host.split('.').every((part) => HOST_LABEL.test(part))) {
      return hostPortFailure(label, shape);
    }
  }
  let port: number | null = null;
  if (portText !== undefined) {
    if (portText !== '' && !/^\d+$/.test(portText)) return hostPortFailure(label, shape);
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      return hostPortFailure(label, '端口须为 1 到 65535 之间的整数');
    }
    port = Number(portText);
  }
  return { ok: true, value: { host, port, isIpv6 } };
}

/** The stored spelling of a host[:port]: lower case, IPv6 bracketed and canonical. */
export function formatHostPort({ host, port, isIpv6 }: HostPort): string {
  const h = isIpv6 ? `[${host}]` : host;
  return port === null ? h : `${h}:${port}`;
}

/**
 * One allowed peer source: an IPv4 or IPv6 address, or a CIDR range whose host bits are zero.
 * The whole address space (/0) is refused: it would let every SIP scanner in.
 */
export function parseIpRange(raw: string, label: string): Parsed<IpRange> {
  const text = raw.trim();
  const fail = (reason: string): Parsed<IpRange> => ({ ok: false, reason: `${label}：${reason}` });
  const shape = '请填写 IP 或网段（CIDR），如 203.0.113.10 或 203.0.113.0/24';
  const [addressText = '', prefixText, extra] = text.split('/');
  if (extra !== undefined || addressText === '') return fail(shape);
  const v4 = parseIpv4(addressText);
  const v6 = v4 ? null : parseIpv6(addressText);
  const bytes = v4 ?? v6;
  if (!bytes) return fail(shape);
  const family = v4 ? 4 : 6;
  const bits = bytes.length * 8;
  let prefix = bits;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) {
      return fail(`网段前缀须为 0 到 ${bits} 之间的整数`);
    }
    prefix = Number(prefixText);
  }
  if (prefix === 0) return fail('不能放行所有地址，请填写运营商或 PBX 的 IP 或网段');
  const address = v4 ? bytes.join('.') : formatIpv6(bytes);
  const masked = bytes.map((byte, i) => {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    return byte & ((0xff << (8 - keep)) & 0xff);
  });
  if (masked.some((byte, i) => byte !== bytes[i])) {
    const network = v4 ? masked.join('.') : formatIpv6(masked);
    return fail(`网段 ${text} 的主机位不为 0，应写作 ${network}/${prefix}`);
  }
  return {
    ok: true,
    value: { family, address, prefix, text: prefix === bits ? address : `${address}/${prefix}` },
  };
}
