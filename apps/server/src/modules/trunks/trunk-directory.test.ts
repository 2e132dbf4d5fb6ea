import { describe, expect, it } from 'vitest';
import type { SipTrunk } from '../../runtime/trunk-control';
import { peerMatcher } from './trunk-directory';

const trunk = (id: string, peerAddresses: string[], over: Partial<SipTrunk> = {}): SipTrunk => ({
  id,
  projectId: 'p1',
  name: id,
  kind: 'ip',
  transport: 'udp',
  registrar: null,
  username: '',
  authUsername: '',
  password: '',
  registerExpires: 300,
  outboundProxy: null,
  signallingAddress: { host: peerAddresses[0]!.split('/')[0]!, port: null, isIpv6: false },
  peerAddresses,
  codecs: ['PCMA'],
  callerIdFormat: 'national',
  maxConcurrent: 10,
  enabled: true,
  ...over,
});

describe('inbound source addresses', () => {
  it('match the IP trunk whose peer addresses hold them, and nothing else', () => {
    const match = peerMatcher([
      trunk('pbx', ['203.0.113.10']),
      trunk('carrier', ['198.51.100.0/24', '2001:db8::/32']),
      trunk('off', ['192.0.2.0/24'], { enabled: false }),
      trunk('registered', ['192.0.2.0/24'], { kind: 'register' }),
    ]);
    expect(match('203.0.113.10')?.id).toBe('pbx');
    expect(match('203.0.113.11')).toBeNull();
    expect(match('198.51.100.254')?.id).toBe('carrier');
    expect(match('198.51.101.1')).toBeNull();
    expect(match('2001:db8:1::5')?.id).toBe('carrier');
    expect(match('2001:db9::5')).toBeNull();
    // What a dual-stack socket reports for an IPv4 peer.
    expect(match('::ffff:203.0.113.10')?.id).toBe('pbx');
    // A disabled trunk, or a register trunk (it is matched by its registration), lets no one in.
    expect(match('192.0.2.7')).toBeNull();
    expect(match('not-an-address')).toBeNull();
  });
});
