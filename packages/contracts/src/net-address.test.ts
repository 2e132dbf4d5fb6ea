import { describe, expect, it } from 'vitest';
import { formatHostPort, parseHostPort, parseIpRange } from './net-address';

const hostPort = (raw: string) => {
  const parsed = parseHostPort(raw, '注册服务器');
  return parsed.ok ? formatHostPort(parsed.value) : parsed.reason;
};
const range = (raw: string) => {
  const parsed = parseIpRange(raw, '对端地址');
  return parsed.ok ? parsed.value.text : parsed.reason;
};

describe('host[:port]', () => {
  it('accepts host names, IPv4 and bracketed IPv6, with or without a port, in one stored spelling', () => {
    expect(hostPort(' SIP.Example.com ')).toBe('sip.example.com');
    expect(hostPort('sip.example.com:5080')).toBe('sip.example.com:5080');
    expect(hostPort('pbx')).toBe('pbx');
    expect(hostPort('203.0.113.10:5060')).toBe('203.0.113.10:5060');
    expect(hostPort('[2001:DB8:0:0:0:0:0:1]:5061')).toBe('[2001:db8::1]:5061');
    expect(hostPort('[::1]')).toBe('[::1]');
    expect(parseHostPort('[2001:db8::1]:5061', 'x')).toEqual({
      ok: true,
      value: { host: '2001:db8::1', port: 5061, isIpv6: true },
    });
  });

  it('names the field and the rule when it refuses', () => {
    const shape = '注册服务器：格式应为 主机[:端口]，如 sip.example.com 或 203.0.113.10:5060';
    expect(hostPort('sip.example.com/path')).toBe(shape);
    expect(hostPort('http://sip.example.com')).toBe(shape);
    expect(hostPort('-bad-.example.com')).toBe(shape);
    expect(hostPort('a b')).toBe(shape);
    expect(hostPort('sip:carrier.example.com')).toBe(
      '注册服务器：请去掉 sip: 前缀，格式应为 主机[:端口]，如 sip.example.com 或 203.0.113.10:5060',
    );
    expect(hostPort('sip.example.com:0')).toBe('注册服务器：端口须为 1 到 65535 之间的整数');
    expect(hostPort('sip.example.com:65536')).toBe('注册服务器：端口须为 1 到 65535 之间的整数');
    expect(hostPort('sip.example.com:')).toBe('注册服务器：端口须为 1 到 65535 之间的整数');
    expect(hostPort('2001:db8::1')).toBe('注册服务器：IPv6 地址须写在方括号内，如 [2001:db8::1]:5060');
    expect(hostPort('256.1.1.1')).toBe('注册服务器：256.1.1.1 不是有效的 IPv4 地址');
    expect(hostPort('10.0.0')).toBe('注册服务器：10.0.0 不是有效的 IPv4 地址');
    expect(hostPort('[2001:db8::g]')).toBe(shape);
  });
});

describe('peer addresses (IP or CIDR)', () => {
  it('accepts IPv4 and IPv6 hosts and ranges in canonical form', () => {
    expect(range('203.0.113.10')).toBe('203.0.113.10');
    expect(range('203.0.113.10/32')).toBe('203.0.113.10');
    expect(range('203.0.113.0/24')).toBe('203.0.113.0/24');
    expect(range('10.0.0.0/8')).toBe('10.0.0.0/8');
    expect(range('2001:0DB8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1');
    expect(range('2001:db8::/32')).toBe('2001:db8::/32');
    expect(range('::ffff:192.0.2.1')).toBe('::ffff:c000:201');
    expect(range('2001:db8:0:1:0:0:0:0/64')).toBe('2001:db8:0:1::/64');
  });

  it('refuses what is not an address, host bits in a range, and the whole internet', () => {
    const shape = '对端地址：请填写 IP 或网段（CIDR），如 203.0.113.10 或 203.0.113.0/24';
    for (const bad of ['', 'sip.example.com', '1.2.3', '01.2.3.4', '1.2.3.4/24/1', '2001:db8:::1', '1::2::3'])
      expect(range(bad), bad).toBe(shape);
    expect(range('203.0.113.0/33')).toBe('对端地址：网段前缀须为 0 到 32 之间的整数');
    expect(range('2001:db8::/129')).toBe('对端地址：网段前缀须为 0 到 128 之间的整数');
    expect(range('10.0.0.1/24')).toBe('对端地址：网段 10.0.0.1/24 的主机位不为 0，应写作 10.0.0.0/24');
    expect(range('2001:db8::1/64')).toBe(
      '对端地址：网段 2001:db8::1/64 的主机位不为 0，应写作 2001:db8::/64',
    );
    expect(range('0.0.0.0/0')).toBe('对端地址：不能放行所有地址，请填写运营商或 PBX 的 IP 或网段');
    expect(range('::/0')).toBe('对端地址：不能放行所有地址，请填写运营商或 PBX 的 IP 或网段');
  });
});
