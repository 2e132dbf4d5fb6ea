import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  computeDigestResponse,
  DigestAuthenticator,
  formatChallenge,
  parseChallenge,
  parseCredentials,
  verifyCredentials,
} from './digest';

/** Reads the auth-params of a header we built, keeping whether each value was quoted. */
function fields(value: string): Map<string, { value: string; quoted: boolean }> {
  expect(value.startsWith('Digest ')).toBe(true);
  const map = new Map<string, { value: string; quoted: boolean }>();
  for (const match of value.slice(7).matchAll(/([a-z]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) {
    map.set(match[1]!, {
      value: match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]!,
      quoted: match[2] !== undefined,
    });
  }
  return map;
}

const counter = (...values: string[]) => {
  let i = 0;
  return () => values[i++] ?? `cnonce-${i}`;
};

describe('published test vectors', () => {
  it('RFC 2617 §3.5: Mufasa, "Circle Of Life", MD5 with qop=auth', () => {
    const auth = new DigestAuthenticator(
      { username: 'Mufasa', password: 'Circle Of Life' },
      { cnonce: counter('0a4f113b') },
    );
    const outcome = auth.onChallenge(
      'www',
      [
        'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
      ],
      false,
    );
    expect(outcome).toEqual({ ok: true });
    const [header] = auth.authorize({ method: 'GET', uri: '/dir/index.html' });
    expect(header!.name).toBe('Authorization');
    const sent = fields(header!.value);
    expect(sent.get('response')).toEqual({ value: '6629fae49393a05397450978507c4ef1', quoted: true });
    expect(sent.get('qop')).toEqual({ value: 'auth', quoted: false });
    expect(sent.get('nc')).toEqual({ value: '00000001', quoted: false });
    expect(sent.get('cnonce')).toEqual({ value: '0a4f113b', quoted: true });
    expect(sent.get('opaque')).toEqual({ value: '5ccc069c403ebaf9f0171e9517f40e41', quoted: true });
    // The challenge named no algorithm, so the answer names none, as the RFC's example does.
    expect(sent.has('algorithm')).toBe(false);
  });

  it.each([
    ['MD5', '8ca523f5e9506fed4657c9700eebdbec'],
    ['SHA-256', '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1'],
  ])('RFC 7616 §3.9.1 with %s', (algorithm, response) => {
    const auth = new DigestAuthenticator(
      { username: 'Mufasa', password: 'Circle of Life' },
      { cnonce: counter('f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ') },
    );
    auth.onChallenge(
      'www',
      [
        `Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=${algorithm}, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`,
      ],
      false,
    );
    const sent = fields(auth.authorize({ method: 'GET', uri: '/dir/index.html' })[0]!.value);
    expect(sent.get('response')?.value).toBe(response);
    expect(sent.get('algorithm')).toEqual({ value: algorithm, quoted: false });
  });
});

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('SIP requests', () => {
  const uri = 'sip:13800138000@trunk.example.cn;user=phone';

  it('answers a 407 on INVITE with Proxy-Authorization computed as RFC 3261 §22.4 describes', () => {
    const auth = new DigestAuthenticator(
      { username: '02188886666', password: 's3cr3t"\\' },
      { cnonce: counter('abc') },
    );
    auth.onChallenge(
      'proxy',
      ['Digest realm="trunk.example.cn", nonce="Yf2a3b", qop="auth", algorithm=MD5'],
      false,
    );
    const [header] = auth.authorize({ method: 'INVITE', uri });
    expect(header!.name).toBe('Proxy-Authorization');
    const ha1 = md5('02188886666:trunk.example.cn:s3cr3t"\\');
    const ha2 = md5(`INVITE:${uri}`);
    const expected = md5(`${ha1}:Yf2a3b:00000001:abc:auth:${ha2}`);
    const sent = fields(header!.value);
    expect(sent.get('response')?.value).toBe(expected);
    expect(sent.get('uri')?.value).toBe(uri);
    expect(sent.get('username')?.value).toBe('02188886666');
  });

  it('counts nc up per nonce across requests of the dialog and restarts it for a new nonce', () => {
    const auth = new DigestAuthenticator(
      { username: 'u', password: 'p' },
      { cnonce: counter('c1', 'c2', 'c3', 'c4') },
    );
    auth.onChallenge('www', ['Digest realm="r", nonce="n1", qop="auth"'], false);
    const nc = (method: string) => fields(auth.authorize({ method, uri })[0]!.value).get('nc')?.value;
    expect([nc('INVITE'), nc('BYE'), nc('INVITE')]).toEqual(['00000001', '00000002', '00000003']);
    // A BYE sent with cached credentials is not a retry: a fresh nonce from the server is taken, not refused.
    expect(auth.onChallenge('www', ['Digest realm="r", nonce="n2", qop="auth"'], false)).toEqual({
      ok: true,
    });
    const after = fields(auth.authorize({ method: 'BYE', uri })[0]!.value);
    expect(after.get('nonce')?.value).toBe('n2');
    expect(after.get('nc')?.value).toBe('00000001');
  });

  it('answers an RFC 2069 challenge (no qop) without cnonce or nc', () => {
    const auth = new DigestAuthenticator({ username: 'alice', password: 'pw' });
    auth.onChallenge('www', ['Digest realm="atlanta.com", nonce="84a4cc6f3082121f32b42a2187831a9e"'], false);
    const sent = fields(auth.authorize({ method: 'REGISTER', uri: 'sip:atlanta.com' })[0]!.value);
    const expected = md5(
      `${md5('alice:atlanta.com:pw')}:84a4cc6f3082121f32b42a2187831a9e:${md5('REGISTER:sip:atlanta.com')}`,
    );
    expect(sent.get('response')?.value).toBe(expected);
    expect([sent.has('qop'), sent.has('nc'), sent.has('cnonce')]).toEqual([false, false, false]);
  });

  it('hashes the body when only auth-int is offered', () => {
    const auth = new DigestAuthenticator({ username: 'u', password: 'p' }, { cnonce: counter('cn') });
    auth.onChallenge('www', ['Digest realm="r", nonce="n", qop="auth-int", algorithm=SHA-256'], false);
    const body = 'v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\n';
    const sent = fields(auth.authorize({ method: 'INVITE', uri, body })[0]!.value);
    const ha1 = sha256('u:r:p');
    const ha2 = sha256(`INVITE:${uri}:${sha256(body)}`);
    expect(sent.get('qop')?.value).toBe('auth-int');
    expect(sent.get('response')?.value).toBe(sha256(`${ha1}:n:00000001:cn:auth-int:${ha2}`));
  });

  it('keeps the first cnonce of an MD5-sess nonce, since H(A1) is bound to it', () => {
    const auth = new DigestAuthenticator(
      { username: 'u', password: 'p' },
      { cnonce: counter('first', 'second') },
    );
    auth.onChallenge('www', ['Digest realm="r", nonce="n", qop="auth", algorithm=MD5-sess'], false);
    auth.authorize({ method: 'REGISTER', uri });
    const sent = fields(auth.authorize({ method: 'REGISTER', uri })[0]!.value);
    const ha1 = md5(`${md5('u:r:p')}:n:first`);
    expect(sent.get('cnonce')?.value).toBe('first');
    expect(sent.get('response')?.value).toBe(md5(`${ha1}:n:00000002:first:auth:${md5(`REGISTER:${uri}`)}`));
  });

  it('uses the first challenge it can answer when the server offers several (RFC 8760 §2.4)', () => {
    const auth = new DigestAuthenticator({ username: 'u', password: 'p' });
    auth.onChallenge(
      'www',
      [
        'Digest realm="r", nonce="a", algorithm=AKAv1-MD5',
        'Digest realm="r", nonce="b", algorithm=SHA-256',
        'Digest realm="r", nonce="c"',
      ],
      false,
    );
    const sent = fields(auth.authorize({ method: 'INVITE', uri })[0]!.value);
    expect([sent.get('nonce')?.value, sent.get('algorithm')?.value]).toEqual(['b', 'SHA-256']);
  });

  it('answers each realm of a response challenged by a proxy and the far end', () => {
    const auth = new DigestAuthenticator({ username: 'u', password: 'p' });
    auth.onChallenge('proxy', ['Digest realm="proxy", nonce="p1"'], false);
    auth.onChallenge('www', ['Digest realm="uas", nonce="u1"'], true);
    const headers = auth.authorize({ method: 'INVITE', uri });
    expect(headers.map((header) => [header.name, fields(header.value).get('realm')?.value])).toEqual([
      ['Proxy-Authorization', 'proxy'],
      ['Authorization', 'uas'],
    ]);
  });

  it('gives up when the retry is challenged again, unless the nonce was only stale', () => {
    const auth = new DigestAuthenticator({ username: 'u', password: 'wrong' });
    expect(auth.onChallenge('www', ['Digest realm="r", nonce="n1"'], false)).toEqual({ ok: true });
    expect(auth.onChallenge('www', ['Digest realm="r", nonce="n2", stale=TRUE'], true)).toEqual({ ok: true });
    expect(auth.onChallenge('www', ['Digest realm="r", nonce="n3"'], true)).toEqual({
      ok: false,
      reason: 'credentials_rejected',
    });
    expect(auth.authorize({ method: 'REGISTER', uri })).toEqual([]);
  });

  it('refuses challenges it cannot answer or that are for another realm', () => {
    const auth = new DigestAuthenticator({ username: 'u', password: 'p', realm: 'trunk.example.cn' });
    expect(auth.onChallenge('www', ['Basic realm="x"'], false)).toEqual({
      ok: false,
      reason: 'no_usable_challenge',
    });
    expect(auth.onChallenge('www', ['Digest realm="evil.example", nonce="n"'], false)).toEqual({
      ok: false,
      reason: 'realm_not_ours',
    });
    expect(auth.hasCredentials).toBe(false);
  });
});

it('never shows the password when the authenticator is logged', () => {
  const auth = new DigestAuthenticator({ username: 'u', password: 'trunk-secret-42' });
  auth.onChallenge('www', ['Digest realm="r", nonce="n"'], false);
  expect(JSON.stringify(auth)).not.toContain('trunk-secret-42');
  expect(inspect(auth, { depth: 10, showHidden: true })).not.toContain('trunk-secret-42');
});

describe('parseChallenge', () => {
  it.each([
    ['Digest realm="r", nonce="n", qop="auth-int"', { qop: ['auth-int'], algorithm: 'MD5', stale: false }],
    [
      'digest REALM="r",NONCE="n",ALGORITHM=sha-256,stale=true',
      { qop: [], algorithm: 'SHA-256', stale: true },
    ],
    [
      'Digest realm="a \\"quoted\\" realm", nonce="n", qop="auth,foo"',
      { realm: 'a "quoted" realm', qop: ['auth'] },
    ],
    ['Digest realm="r", nonce="n", domain="sip:a.example, sip:b.example", qop=auth', { qop: ['auth'] }],
  ])('%s', (value, expected) => {
    expect(parseChallenge(value)).toMatchObject(expected);
  });

  it.each([
    'Digest realm="r"',
    'Digest nonce="n"',
    'Digest realm="r", nonce="n", qop="auth-conf"',
    'Digest realm="r", nonce="unterminated',
    'Digest realm="r", nonce="n", algorithm=AKAv1-MD5',
    'Bearer realm="r", nonce="n"',
  ])('rejects %s', (value) => {
    expect(parseChallenge(value)).toBeNull();
  });
});

describe('server side', () => {
  const server = {
    realm: 'registrar.test',
    password: (user: string) => (user === '1001' ? 'pa$$' : undefined),
  };
  const uri = 'sip:registrar.test';

  it.each(['MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess', 'SHA-512-256'] as const)(
    'accepts what the client builds for a %s challenge it formatted',
    (algorithm) => {
      const auth = new DigestAuthenticator({ username: '1001', password: 'pa$$' });
      const challenge = formatChallenge({
        realm: 'registrar.test',
        nonce: 'xyz',
        opaque: 'o',
        algorithm,
        qop: ['auth'],
      });
      auth.onChallenge('www', [challenge], false);
      const [header] = auth.authorize({ method: 'REGISTER', uri });
      expect(verifyCredentials(header!.value, { method: 'REGISTER', uri }, server)).toEqual({
        ok: true,
        username: '1001',
        nc: 1,
      });
    },
  );

  it('rejects a wrong password, another method, an unknown user and an expired nonce', () => {
    const sign = (username: string, password: string) => {
      const auth = new DigestAuthenticator({ username, password });
      auth.onChallenge(
        'www',
        [formatChallenge({ realm: 'registrar.test', nonce: 'n', qop: ['auth'] })],
        false,
      );
      return auth.authorize({ method: 'REGISTER', uri })[0]!.value;
    };
    expect(verifyCredentials(sign('1001', 'nope'), { method: 'REGISTER', uri }, server)).toMatchObject({
      reason: 'wrong_response',
    });
    expect(verifyCredentials(sign('1001', 'pa$$'), { method: 'INVITE', uri }, server)).toMatchObject({
      reason: 'wrong_response',
    });
    expect(verifyCredentials(sign('1002', 'pa$$'), { method: 'REGISTER', uri }, server)).toMatchObject({
      reason: 'unknown_user',
    });
    expect(
      verifyCredentials(sign('1001', 'pa$$'), { method: 'REGISTER', uri: 'sip:other.test' }, server),
    ).toMatchObject({ reason: 'uri_mismatch' });
    expect(
      verifyCredentials(
        sign('1001', 'pa$$'),
        { method: 'REGISTER', uri },
        { ...server, nonceValid: () => false },
      ),
    ).toMatchObject({ reason: 'stale_nonce' });
    expect(verifyCredentials('Digest username="1001"', { method: 'REGISTER' }, server)).toMatchObject({
      reason: 'malformed',
    });
  });

  it('verifies an RFC 2069 answer and parses what a softphone sends', () => {
    const response = computeDigestResponse({
      algorithm: 'MD5',
      username: '1001',
      password: 'pa$$',
      realm: 'registrar.test',
      nonce: 'n0',
      method: 'INVITE',
      uri,
    });
    const value = `Digest username="1001",realm="registrar.test",nonce="n0",uri="${uri}",response="${response}",algorithm=MD5`;
    expect(parseCredentials(value)).toMatchObject({ username: '1001', algorithm: 'MD5' });
    expect(verifyCredentials(value, { method: 'INVITE', uri }, server)).toEqual({
      ok: true,
      username: '1001',
    });
  });
});
