import { describe, expect, it } from 'vitest';
import { Random } from '../sim/random';
import {
  createStreamFramer,
  formatUri,
  formatVia,
  getParam,
  isRequest,
  type ParseResult,
  parse,
  parseCSeq,
  parseNameAddr,
  parseUri,
  parseVia,
  SipHeaders,
  type SipMessage,
  type SipRequest,
  type SipResponse,
  serialize,
} from './message';

/** Joins header lines with CRLF, adds the blank line and the body, filling {{len}} with its byte length. */
function wire(lines: string[], body = ''): Buffer {
  const head = lines.join('\r\n').replace('{{len}}', String(Buffer.byteLength(body, 'utf8')));
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'utf8'), Buffer.from(body, 'utf8')]);
}

function ok(result: ParseResult): SipMessage {
  if (!result.ok) throw new Error(`expected a message, got: ${result.reason}`);
  return result.message;
}

const request = (result: ParseResult) => {
  const message = ok(result);
  if (!isRequest(message)) throw new Error('expected a request');
  return message;
};

const SDP = [
  'v=0',
  'o=- 1 1 IN IP4 192.0.2.4',
  's=-',
  'c=IN IP4 192.0.2.4',
  't=0 0',
  'm=audio 49217 RTP/AVP 0 8',
  '',
].join('\r\n');

const INVITE_LINES = [
  'INVITE sip:13800138000@trunk.example.cn SIP/2.0',
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport',
  'Max-Forwards: 70',
  'To: <sip:13800138000@trunk.example.cn>',
  'From: "呼叫中心" <sip:02160880000@pbx.example.cn>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.example.cn',
  'CSeq: 314159 INVITE',
  'Contact: <sip:02160880000@192.0.2.10:5060>',
  'Content-Type: application/sdp',
  'Content-Length: {{len}}',
];

describe('parse', () => {
  it('reads a request with its fields and a byte-exact body', () => {
    const message = request(parse(wire(INVITE_LINES, SDP)));
    expect(message).toMatchObject({
      method: 'INVITE',
      uri: 'sip:13800138000@trunk.example.cn',
      version: 'SIP/2.0',
    });
    expect(message.headers.get('call-id')).toBe('a84b4c76e66710@pc33.example.cn');
    expect(message.headers.get('CSEQ')).toBe('314159 INVITE');
    expect(parseNameAddr(message.headers.get('From')!)).toMatchObject({ displayName: '呼叫中心' });
    expect(message.body.toString('utf8')).toBe(SDP);
  });

  it('reads a response', () => {
    const message = ok(
      parse(
        wire([
          'SIP/2.0 486 忙线中',
          'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;received=198.51.100.7;rport=40123',
          'To: <sip:13800138000@trunk.example.cn>;tag=a6c85cf',
          'From: <sip:02160880000@pbx.example.cn>;tag=1928301774',
          'Call-ID: a84b4c76e66710@pc33.example.cn',
          'CSeq: 314159 INVITE',
          'Content-Length: 0',
        ]),
      ),
    ) as SipResponse;
    expect(message).toMatchObject({ status: 486, reason: '忙线中', version: 'SIP/2.0' });
    expect(parseVia(message.headers.get('via')!)).toMatchObject({ received: '198.51.100.7', rport: 40123 });
  });

  it('counts Content-Length in bytes for a Chinese UTF-8 body and drops bytes beyond it', () => {
    const text = '您好，这里是客服中心，请问有什么可以帮您？';
    expect(Buffer.byteLength(text)).toBe(text.length * 3);
    const lines = INVITE_LINES.map((line) => line.replace('application/sdp', 'text/plain;charset=utf-8'));
    const message = ok(parse(Buffer.concat([wire(lines, text), Buffer.from('trailing garbage')])));
    expect(message.headers.get('Content-Length')).toBe(String(text.length * 3));
    expect(message.body.toString('utf8')).toBe(text);

    const written = serialize(message);
    expect(written.toString('utf8')).toContain(`\r\nContent-Length: ${text.length * 3}\r\n`);
    expect(ok(parse(written)).body.toString('utf8')).toBe(text);
  });

  it('rejects a datagram cut before the blank line, without answering it', () => {
    const cut = wire(INVITE_LINES, SDP).subarray(0, 200);
    expect(parse(cut)).toMatchObject({
      ok: false,
      reason: 'no blank line after the headers',
      respondable: false,
    });
  });

  it('skips CRLFs before the start line and accepts bare LF line ends', () => {
    const [head] = wire(INVITE_LINES, SDP).toString().split('\r\n\r\n');
    const lf = Buffer.from(`\r\n\r\n${head!.replace(/\r\n/g, '\n')}\n\n${SDP}`);
    const message = ok(parse(lf));
    expect(message.headers.get('CSeq')).toBe('314159 INVITE');
    expect(message.body.toString()).toBe(SDP);
  });

  it('takes the rest of a datagram as the body when Content-Length is absent', () => {
    const lines = INVITE_LINES.filter((line) => !line.startsWith('Content-Length'));
    expect(ok(parse(wire(lines, SDP))).body.toString()).toBe(SDP);
  });

  it('expands compact forms, case-insensitively', () => {
    const message = request(
      parse(
        wire(
          [
            'OPTIONS sip:user@example.com SIP/2.0',
            'v: SIP/2.0/UDP host.example.com;branch=z9hG4bKc1',
            'T: <sip:user@example.com>',
            'f: <sip:caller@example.com>;tag=1',
            'i: compact-1',
            'CSeq: 1 OPTIONS',
            'm: <sip:caller@host.example.com>',
            'k: timer, 100rel',
            'u: talk, hold',
            'x: 1800;refresher=uac',
            'o: refer',
            'r: <sip:transfer@example.com>',
            'b: <sip:caller@example.com>',
            's: 回访',
            'e: gzip',
            'c: text/plain',
            'l: {{len}}',
          ],
          '你好',
        ),
      ),
    );
    const names = message.headers.entries().map((header) => header.name);
    expect(names).toEqual([
      'Via',
      'To',
      'From',
      'Call-ID',
      'CSeq',
      'Contact',
      'Supported',
      'Supported',
      'Allow-Events',
      'Allow-Events',
      'Session-Expires',
      'Event',
      'Refer-To',
      'Referred-By',
      'Subject',
      'Content-Encoding',
      'Content-Type',
      'Content-Length',
    ]);
    expect(message.headers.getAll('k')).toEqual(['timer', '100rel']);
    expect(message.headers.get('Subject')).toBe('回访');
    expect(message.body.toString()).toBe('你好');
  });

  it('unfolds continuation lines', () => {
    const message = request(
      parse(
        wire([
          'OPTIONS sip:user@example.com SIP/2.0',
          'Via: SIP/2.0/UDP host.example.com',
          '\t;branch=z9hG4bKfold',
          'To:',
          '  <sip:user@example.com>',
          'From: <sip:caller@example.com>;tag=1',
          'Call-ID: fold-1',
          'CSeq: 1',
          ' OPTIONS',
          'Subject: first part',
          '   second part',
          'Content-Length: 0',
        ]),
      ),
    );
    expect(parseVia(message.headers.get('Via')!)?.branch).toBe('z9hG4bKfold');
    expect(message.headers.get('To')).toBe('<sip:user@example.com>');
    expect(parseCSeq(message.headers.get('CSeq')!)).toEqual({ seq: 1, method: 'OPTIONS' });
    expect(message.headers.get('Subject')).toBe('first part second part');
  });

  it('keeps several Vias in order, from one line and from several', () => {
    const message = ok(
      parse(
        wire([
          'SIP/2.0 200 OK',
          'Via: SIP/2.0/UDP a.example.com;branch=z9hG4bK1, SIP/2.0/TCP b.example.com:5070;branch=z9hG4bK2',
          'Via: SIP/2.0/TLS [2001:db8::9]:5061;branch=z9hG4bK3',
          'v: SIP/2.0/WSS c.example.com;branch=z9hG4bK4,SIP/2.0/UDP d.example.com;branch=z9hG4bK5',
          'To: <sip:user@example.com>;tag=2',
          'From: <sip:caller@example.com>;tag=1',
          'Call-ID: vias-1',
          'CSeq: 1 INVITE',
          'Content-Length: 0',
        ]),
      ),
    );
    const vias = message.headers.getAll('Via').map((via) => parseVia(via)!);
    expect(vias.map((via) => via.branch)).toEqual([
      'z9hG4bK1',
      'z9hG4bK2',
      'z9hG4bK3',
      'z9hG4bK4',
      'z9hG4bK5',
    ]);
    expect(vias[1]).toMatchObject({ transport: 'TCP', host: 'b.example.com', port: 5070 });
    expect(vias[2]).toMatchObject({ transport: 'TLS', host: '[2001:db8::9]', port: 5061 });
  });

  it('does not split on commas inside quoted display names, URIs or non-list headers', () => {
    const message = request(
      parse(
        wire([
          'INVITE sip:user@example.com SIP/2.0',
          'Via: SIP/2.0/UDP host.example.com;branch=z9hG4bKq',
          'To: "Zhang, San" <sip:user@example.com>',
          'From: "Li, Si" <sip:caller@example.com>;tag=1',
          'Call-ID: comma-1',
          'CSeq: 1 INVITE',
          'Contact: "Wang, Wu" <sip:a@host.example.com>;q=0.7, <sip:b@[2001:db8::1]:5080;transport=tcp>',
          'Route: <sip:p1.example.com;lr>,<sip:p2.example.com;lr>',
          'Date: Sat, 13 Nov 2010 23:29:00 GMT',
          'WWW-Authenticate: Digest realm="example.com", nonce="abc", qop="auth,auth-int"',
          'X-Custom: a, b',
          'Content-Length: 0',
        ]),
      ),
    );
    expect(parseNameAddr(message.headers.get('To')!)?.displayName).toBe('Zhang, San');
    const contacts = message.headers.getAll('Contact').map((contact) => parseNameAddr(contact)!);
    expect(contacts).toHaveLength(2);
    expect(contacts[0]).toMatchObject({ displayName: 'Wang, Wu', uri: 'sip:a@host.example.com' });
    expect(getParam(contacts[0]!.params, 'Q')).toBe('0.7');
    expect(parseUri(contacts[1]!.uri)).toMatchObject({ host: '[2001:db8::1]', port: 5080 });
    expect(message.headers.getAll('Route')).toEqual(['<sip:p1.example.com;lr>', '<sip:p2.example.com;lr>']);
    expect(message.headers.getAll('Date')).toEqual(['Sat, 13 Nov 2010 23:29:00 GMT']);
    expect(message.headers.getAll('WWW-Authenticate')).toHaveLength(1);
    expect(message.headers.get('x-custom')).toBe('a, b');
  });
});

describe('header grammars', () => {
  it('parses sip, sips and tel URIs', () => {
    expect(
      parseUri(
        'sip:alice:secret@example.com:5070;transport=tcp;lr?subject=%E4%BD%A0%E5%A5%BD&priority=urgent',
      ),
    ).toEqual({
      scheme: 'sip',
      user: 'alice',
      password: 'secret',
      host: 'example.com',
      port: 5070,
      params: new Map([
        ['transport', 'tcp'],
        ['lr', null],
      ]),
      headers: new Map([
        ['subject', '你好'],
        ['priority', 'urgent'],
      ]),
    });
    expect(parseUri('sips:[2001:db8::1]:5061')).toMatchObject({
      scheme: 'sips',
      host: '[2001:db8::1]',
      port: 5061,
    });
    expect(parseUri('SIP:192.0.2.1')).toMatchObject({ scheme: 'sip', host: '192.0.2.1' });
    expect(parseUri('tel:+86-21-6088-0000;phone-context=example.cn')).toMatchObject({
      scheme: 'tel',
      user: '+86-21-6088-0000',
    });
    for (const bad of [
      'sip:',
      'sip:user@',
      'sip:host:99999',
      'sip:[2001:db8::1',
      'sip:a b',
      'sip:x%zz@host',
      'mailto:a@b',
    ]) {
      expect(parseUri(bad), bad).toBeNull();
    }
  });

  it('round-trips URIs through formatUri', () => {
    const text = 'sip:%E5%BC%A0@example.com:5060;transport=udp';
    const uri = parseUri(text)!;
    expect(uri.user).toBe('张');
    expect(formatUri(uri)).toBe(text);
  });

  it('parses name-addr and addr-spec forms', () => {
    expect(parseNameAddr('"A \\"quoted\\" name" <sip:a@example.com;transport=tcp>;tag=xyz;lr')).toEqual({
      displayName: 'A "quoted" name',
      uri: 'sip:a@example.com;transport=tcp',
      params: new Map([
        ['tag', 'xyz'],
        ['lr', null],
      ]),
    });
    expect(parseNameAddr('Plain  Name <sip:b@example.com>')).toMatchObject({ displayName: 'Plain Name' });
    expect(parseNameAddr('sip:c@example.com;tag=1')).toEqual({
      uri: 'sip:c@example.com',
      params: new Map([['tag', '1']]),
    });
    expect(parseNameAddr('<sip:d@example.com>;expires="3600"')?.params.get('expires')).toBe('3600');
    for (const bad of [
      '"unterminated <sip:a@b>',
      '<sip:a@b',
      'no-scheme',
      '<sip:a@b>;;tag=1',
      '<sip:a@b> junk',
    ]) {
      expect(parseNameAddr(bad), bad).toBeNull();
    }
  });

  it('parses Via and CSeq', () => {
    expect(parseVia('SIP/2.0/udp [::1]:5060;branch=z9hG4bKx;rport;received=::1')).toMatchObject({
      protocol: 'SIP/2.0',
      transport: 'UDP',
      host: '[::1]',
      port: 5060,
      branch: 'z9hG4bKx',
      rport: true,
      received: '::1',
    });
    expect(parseVia('SIP/2.0/UDP')).toBeNull();
    expect(parseVia('SIP/2.0/UDP host;rport=x')).toBeNull();
    expect(parseCSeq('4294967295 BYE')).toEqual({ seq: 4294967295, method: 'BYE' });
    expect(parseCSeq('4294967296 BYE')).toBeNull();
    expect(parseCSeq('-1 BYE')).toBeNull();
  });

  it('writes a stamped Via that parses back, keeping the other parameters in order', () => {
    const via = parseVia('SIP/2.0/UDP 10.0.0.1;branch=z9hG4bKa;rport;x-tag="a b"')!;
    const stamped = formatVia({
      ...via,
      host: '[2001:db8::1]',
      port: 5062,
      received: '2001:db8::9',
      rport: 40000,
    });
    expect(stamped).toBe(
      'SIP/2.0/UDP [2001:db8::1]:5062;branch=z9hG4bKa;rport=40000;x-tag="a b";received=2001:db8::9',
    );
    expect(parseVia(stamped)).toMatchObject({ host: '[2001:db8::1]', rport: 40000, received: '2001:db8::9' });
    const headers = new SipHeaders([
      ['Via', 'SIP/2.0/UDP a'],
      ['Via', 'SIP/2.0/UDP b'],
    ]);
    headers.setFirst('v', 'SIP/2.0/UDP c');
    expect(headers.getAll('Via')).toEqual(['SIP/2.0/UDP c', 'SIP/2.0/UDP b']);
  });
});

describe('serialize', () => {
  it('round-trips requests and responses byte for byte once canonical', () => {
    const first = serialize(ok(parse(wire(INVITE_LINES, SDP))));
    expect(first.toString()).toBe(wire(INVITE_LINES, SDP).toString());
    expect(serialize(ok(parse(first))).equals(first)).toBe(true);
  });

  it('writes canonical names and a Content-Length even when the message had none', () => {
    const headers = new SipHeaders([
      ['v', 'SIP/2.0/UDP host;branch=z9hG4bK1'],
      ['call-id', 'abc'],
      ['cseq', '1 MESSAGE'],
      ['www-authenticate', 'Digest realm="x"'],
      ['x-custom-header', 'value\r\nInjected: yes'],
    ]);
    const message: SipRequest = {
      method: 'MESSAGE',
      uri: 'sip:a@b',
      version: 'SIP/2.0',
      headers,
      body: Buffer.from('短信'),
    };
    expect(serialize(message).toString()).toBe(
      [
        'MESSAGE sip:a@b SIP/2.0',
        'Via: SIP/2.0/UDP host;branch=z9hG4bK1',
        'Call-ID: abc',
        'CSeq: 1 MESSAGE',
        'WWW-Authenticate: Digest realm="x"',
        'X-Custom-Header: value Injected: yes',
        'Content-Length: 6',
        '',
        '短信',
      ].join('\r\n'),
    );
  });

  it('corrects a stale Content-Length in place', () => {
    const message = ok(parse(wire(INVITE_LINES, SDP)));
    message.body = Buffer.from('v=0\r\n');
    const written = serialize(message).toString();
    expect(written).toContain('Content-Type: application/sdp\r\nContent-Length: 5\r\n\r\nv=0\r\n');
  });
});

describe('createStreamFramer', () => {
  const chineseBody = '张先生您好，这是回访电话。';
  const first = wire(INVITE_LINES, SDP);
  const second = wire(
    INVITE_LINES.map((line) => line.replace('application/sdp', 'text/plain').replace('314159', '314160')),
    chineseBody,
  );

  function collect(options?: Parameters<typeof createStreamFramer>[2]) {
    const messages: SipMessage[] = [];
    const errors: string[] = [];
    const framer = createStreamFramer(
      (message) => messages.push(message),
      (failure) => errors.push(failure.reason),
      options,
    );
    return { framer, messages, errors };
  }

  it('frames two back-to-back messages split at every byte position', () => {
    const stream = Buffer.concat([first, second]);
    for (let split = 0; split <= stream.length; split++) {
      const { framer, messages, errors } = collect();
      framer.push(stream.subarray(0, split));
      framer.push(stream.subarray(split));
      expect(errors).toEqual([]);
      expect(messages.map((message) => message.body.toString('utf8'))).toEqual([SDP, chineseBody]);
      expect(framer.buffered).toBe(0);
    }
  });

  it('frames messages fed one byte at a time, with keep-alives between them', () => {
    let pings = 0;
    const { framer, messages, errors } = collect({ onKeepAlive: () => pings++ });
    const stream = Buffer.concat([
      Buffer.from('\r\n\r\n'),
      first,
      Buffer.from('\r\n'),
      second,
      Buffer.from('\r\n\r\n'),
    ]);
    for (const byte of stream) framer.push(Buffer.from([byte]));
    expect(errors).toEqual([]);
    expect(messages).toHaveLength(2);
    expect(messages[1]!.body.toString('utf8')).toBe(chineseBody);
    expect(pings).toBe(2);
  });

  it('emits every message of a large chunk carrying many', () => {
    const { framer, messages } = collect();
    framer.push(Buffer.concat(Array.from({ length: 500 }, () => second)));
    expect(messages).toHaveLength(500);
    expect(framer.buffered).toBe(0);
  });

  it('reports an unparsable but well-framed message and keeps going', () => {
    const broken = wire(
      INVITE_LINES.map((line) => line.replace('CSeq: 314159 INVITE', 'CSeq: 314159 BYE')),
      SDP,
    );
    const { framer, messages, errors } = collect();
    framer.push(Buffer.concat([broken, second]));
    expect(errors).toEqual(['CSeq method does not match the request method']);
    expect(messages).toHaveLength(1);
  });

  it('breaks on a stream message without Content-Length', () => {
    const { framer, messages, errors } = collect();
    framer.push(wire(INVITE_LINES.filter((line) => !line.startsWith('Content-Length'))));
    framer.push(second);
    expect(errors).toHaveLength(1);
    expect(messages).toHaveLength(0);
    expect(framer.broken).toBe(true);
  });

  it('gives up on oversize messages instead of buffering forever', () => {
    const endless = collect({ maxMessageBytes: 1024 });
    for (let i = 0; i < 100; i++)
      endless.framer.push(Buffer.from('X-Filler: 0123456789012345678901234567890123456789\r\n'));
    expect(endless.errors).toEqual(['message too large']);
    expect(endless.framer.buffered).toBe(0);

    const huge = collect({ maxMessageBytes: 1024 });
    huge.framer.push(wire(INVITE_LINES.map((line) => line.replace('{{len}}', '5000'))));
    expect(huge.errors).toEqual(['message too large']);
  });
});

// RFC 4475 torture tests, rebuilt from the RFC's intent (the originals are not vendored here).
describe('RFC 4475 torture messages', () => {
  const TORTURE_SDP = [
    'v=0',
    'o=mhandley 29739 7272939 IN IP4 192.0.2.3',
    's=-',
    'c=IN IP4 192.0.2.4',
    't=0 0',
    'm=audio 49217 RTP/AVP 0 12',
    'm=video 3227 RTP/AVP 31',
    'a=rtpmap:31 LPC',
    '',
  ].join('\r\n');

  it('wsinv: a whitespace-heavy but valid INVITE', () => {
    const message = request(
      parse(
        wire(
          [
            'INVITE sip:vivekg@chair-dnrc.example.com;unknownparam SIP/2.0',
            'TO :',
            ' sip:vivekg@chair-dnrc.example.com ;   tag    = 1918181833n',
            'from   : "J Rosenberg \\\\\\""       <sip:jdrosen@example.com>',
            '  ;',
            '  tag = 98asjd8',
            'MaX-fOrWaRdS: 0068',
            'Call-ID',
            ' : wsinv.ndaksdj@192.0.2.1',
            'Content-Length   : {{len}}',
            'cseq: 0009',
            '  INVITE',
            'Via  : SIP  /   2.0',
            ' /UDP',
            '    192.0.2.2;branch=390skdjuw',
            's :',
            'NewFangledHeader:   newfangled value',
            ' continued newfangled value',
            'UnknownHeaderWithUnusualValue: ;;,,;;,;',
            'Content-Type: application/sdp',
            'Route:',
            ' <sip:services.example.com;lr;unknownwith=value;unknown-no-value>',
            'v:  SIP  / 2.0  / TCP     spindle.example.com   ;',
            '  branch  =   z9hG4bK9ikj8  ,',
            ' SIP  /    2.0   / UDP  192.168.255.111   ; branch=',
            ' z9hG4bK30239',
            'm:"Quoted string \\"\\"" <sip:jdrosen@example.com> ; newparam =',
            '      newvalue ;',
            '  secondparam ; q = 0.33',
          ],
          TORTURE_SDP,
        ),
      ),
    );
    expect(message.uri).toBe('sip:vivekg@chair-dnrc.example.com;unknownparam');
    expect(parseUri(message.uri)?.params.get('unknownparam')).toBeNull();
    const to = parseNameAddr(message.headers.get('To')!)!;
    expect(to).toMatchObject({ uri: 'sip:vivekg@chair-dnrc.example.com' });
    expect(to.params.get('tag')).toBe('1918181833n');
    const from = parseNameAddr(message.headers.get('From')!)!;
    expect(from.displayName).toBe('J Rosenberg \\"');
    expect(from.params.get('tag')).toBe('98asjd8');
    expect(message.headers.get('Max-Forwards')).toBe('0068');
    expect(message.headers.get('Call-ID')).toBe('wsinv.ndaksdj@192.0.2.1');
    expect(parseCSeq(message.headers.get('CSeq')!)).toEqual({ seq: 9, method: 'INVITE' });
    expect(message.headers.get('Subject')).toBe('');
    expect(message.headers.get('NewFangledHeader')).toBe('newfangled value continued newfangled value');
    expect(message.headers.get('UnknownHeaderWithUnusualValue')).toBe(';;,,;;,;');
    const vias = message.headers.getAll('Via').map((via) => parseVia(via)!);
    expect(vias.map((via) => [via.transport, via.host, via.branch])).toEqual([
      ['UDP', '192.0.2.2', '390skdjuw'],
      ['TCP', 'spindle.example.com', 'z9hG4bK9ikj8'],
      ['UDP', '192.168.255.111', 'z9hG4bK30239'],
    ]);
    const contact = parseNameAddr(message.headers.get('Contact')!)!;
    expect(contact.displayName).toBe('Quoted string ""');
    expect([...contact.params]).toEqual([
      ['newparam', 'newvalue'],
      ['secondparam', null],
      ['q', '0.33'],
    ]);
    expect(message.body.toString()).toBe(TORTURE_SDP);
  });

  it('intmeth: unusual method and URI characters, UTF-8 in an extension header', () => {
    const method = "!interesting-Method0123456789_*+`.%indeed'~";
    const user = "1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*";
    const message = request(
      parse(
        wire([
          `${method} sip:${user}:&it+has=1,weird!*pas$wo~d_too.(doesn't-it)@example.com SIP/2.0`,
          "Via: SIP/2.0/TCP host1.example.com;branch=z9hG4bK-.!%66*_+`'~",
          `To: "BEL:\\\x07 NUL:\\\x00 DEL:\\\x7f" <sip:${user}@example.com>`,
          "From: token1~` token2'+_ token3*%!.- <sip:mundane@example.com>;fromParam''~+*_!.-%=\"работающий\";tag=_token~1'+`*%!-.",
          'Call-ID: intmeth.word%ZK-!.*_+\'@word`~)(><:\\/"][?}{',
          `CSeq: 139122385 ${method}`,
          'Max-Forwards: 255',
          "extensionHeader-!.%*+_`'~:\uFEFF大停電",
          'Content-Length: 0',
        ]),
      ),
    );
    expect(message.method).toBe(method);
    expect(parseUri(message.uri)).toMatchObject({
      user,
      password: "&it+has=1,weird!*pas$wo~d_too.(doesn't-it)",
      host: 'example.com',
    });
    expect(parseNameAddr(message.headers.get('To')!)).toMatchObject({
      displayName: 'BEL:\x07 NUL:\x00 DEL:\x7f',
      uri: `sip:${user}@example.com`,
    });
    const from = parseNameAddr(message.headers.get('From')!)!;
    expect(from.displayName).toBe("token1~` token2'+_ token3*%!.-");
    expect(from.params.get("fromparam''~+*_!.-%")).toBe('работающий');
    expect(from.params.get('tag')).toBe("_token~1'+`*%!-.");
    expect(message.headers.get('Call-ID')).toBe('intmeth.word%ZK-!.*_+\'@word`~)(><:\\/"][?}{');
    expect(message.headers.get("extensionheader-!.%*+_`'~")).toBe('\uFEFF大停電');
  });

  it('esc01: escaped characters in URIs', () => {
    const message = request(
      parse(
        wire(
          [
            'INVITE sip:sips%3Auser%40example.com@example.net SIP/2.0',
            'To: sip:%75se%72@example.com',
            'From: <sip:I%20have%20spaces@example.net>;tag=938',
            'Max-Forwards: 87',
            'i: esc01.239409asdfakjkn23onasd0-3234',
            'CSeq: 234234 INVITE',
            'Via: SIP/2.0/UDP host5.example.net;branch=z9hG4bKkdjuw',
            'C: application/sdp',
            'Contact:',
            '  <sip:cal%6Cer@host5.example.net;%6C%72;n%61me=v%61lue%25%34%31>',
            'Content-Length: {{len}}',
          ],
          TORTURE_SDP,
        ),
      ),
    );
    expect(parseUri(message.uri)).toMatchObject({ user: 'sips:user@example.com', host: 'example.net' });
    expect(parseUri(parseNameAddr(message.headers.get('To')!)!.uri)?.user).toBe('user');
    expect(parseUri(parseNameAddr(message.headers.get('From')!)!.uri)?.user).toBe('I have spaces');
    const contact = parseUri(parseNameAddr(message.headers.get('Contact')!)!.uri)!;
    expect(contact.user).toBe('caller');
    expect([...contact.params]).toEqual([
      ['lr', null],
      ['name', 'value%41'],
    ]);
    expect(parseUri(formatUri(contact))).toEqual(contact);
  });

  it('lwsdisp: no whitespace between display name and <', () => {
    const message = request(
      parse(
        wire([
          'OPTIONS sip:user@example.com SIP/2.0',
          'To: sip:user@example.com',
          'From: caller<sip:caller@example.com>;tag=323',
          'Max-Forwards: 70',
          'Call-ID: lwsdisp.1234abcd@funky.example.com',
          'CSeq: 60 OPTIONS',
          'Via: SIP/2.0/UDP funky.example.com;branch=z9hG4bKkdjuw',
          'l: 0',
        ]),
      ),
    );
    expect(parseNameAddr(message.headers.get('From')!)).toMatchObject({
      displayName: 'caller',
      uri: 'sip:caller@example.com',
    });
  });

  it('longreq: very long values everywhere', () => {
    const long = (seed: string, count: number) => seed.repeat(count);
    const vias = Array.from(
      { length: 40 },
      (_, i) => `Via: SIP/2.0/TCP sip${i}.example.com;branch=z9hG4bK${long('x', 200)}${i}`,
    );
    const message = request(
      parse(
        wire(
          [
            `INVITE sip:${long('w', 500)}@${long('l', 60)}.example.com SIP/2.0`,
            `To: "${long('I have a user name of extreme proportion ', 20)}" <sip:${long('w', 500)}@example.com;${long('p', 300)}=${long('v', 300)}>`,
            `From: sip:amazinglylongcallername@example.net;tag=${long('12982424', 100)};unknownheaderparamname=${long('v', 200)}`,
            `Call-ID: longreq.${long('0123456789', 300)}`,
            'CSeq: 3882340 INVITE',
            `Unknown-${long('Long', 50)}-Name: ${long('unknown-long-value;', 500)}`,
            ...vias,
            `Via: ${Array.from({ length: 20 }, (_, i) => `SIP/2.0/UDP list${i}.example.com;branch=z9hG4bKlist${i}`).join(', ')}`,
            'Max-Forwards: 70',
            'Contact: <sip:amazinglylongcallername@host5.example.net>',
            'Content-Type: application/sdp',
            'l: {{len}}',
          ],
          TORTURE_SDP,
        ),
      ),
    );
    expect(message.headers.getAll('Via')).toHaveLength(60);
    expect(parseVia(message.headers.getAll('Via').at(-1)!)?.branch).toBe('z9hG4bKlist19');
    expect(parseNameAddr(message.headers.get('From')!)!.params.get('tag')).toHaveLength(800);
    expect(message.headers.get('Call-ID')).toHaveLength('longreq.'.length + 3000);
    expect(message.body.toString()).toBe(TORTURE_SDP);
  });

  it('dblreq: a second request after Content-Length: 0 is discarded', () => {
    const second = wire(INVITE_LINES, SDP).toString();
    const message = request(
      parse(
        Buffer.concat([
          wire([
            'REGISTER sip:example.com SIP/2.0',
            'To: sip:j.user@example.com',
            'From: sip:j.user@example.com;tag=43251j3j324',
            'Max-Forwards: 8',
            'I: dblreq.0ha0isndaksdj99sdfafnl3lk233412',
            'Contact: sip:j.user@host.example.com',
            'CSeq: 8 REGISTER',
            'Via: SIP/2.0/UDP 192.0.2.125;branch=z9hG4bKkdjuw23492',
            'Content-Length: 0',
          ]),
          Buffer.from(second),
        ]),
      ),
    );
    expect(message.method).toBe('REGISTER');
    expect(message.body.length).toBe(0);
  });

  it('bcast: a response whose Via names the broadcast address still parses', () => {
    const message = ok(
      parse(
        wire([
          'SIP/2.0 200 OK',
          'Via: SIP/2.0/UDP 192.0.2.198;branch=z9hG4bK1324923',
          'Via: SIP/2.0/UDP 255.255.255.255;branch=z9hG4bK1saber23',
          'Call-ID: bcast.0384840201234ksdfak3j2erwedfsASdf',
          'CSeq: 35 INVITE',
          'From: sip:user@example.com;tag=11141343',
          'To: sip:user@example.edu;tag=8321234356',
          'Content-Length: 0',
        ]),
      ),
    );
    expect(parseVia(message.headers.getAll('Via')[1]!)?.host).toBe('255.255.255.255');
  });

  it('zeromf: Max-Forwards of zero is valid', () => {
    const message = request(
      parse(
        wire([
          'OPTIONS sip:user@example.com SIP/2.0',
          'To: sip:user@example.com',
          'From: sip:caller@example.net;tag=3ghsd41',
          'Call-ID: zeromf.jfasdlfnm2o2l43r5u0asdfas',
          'CSeq: 39234321 OPTIONS',
          'Via: SIP/2.0/UDP host1.example.com;branch=z9hG4bKkdjuw2349i',
          'Max-Forwards: 0',
          'Content-Length: 0',
        ]),
      ),
    );
    expect(message.headers.get('Max-Forwards')).toBe('0');
  });

  it('unksm and novelsc: schemes we do not speak parse, and parseUri says so (answer 416)', () => {
    const unksm = request(
      parse(
        wire([
          'REGISTER sip:example.com SIP/2.0',
          'To: isbn:2983792873',
          'From: <http://www.example.com>;tag=3234233',
          'Call-ID: unksm.2daksdj23a@example.com',
          'CSeq: 234902 REGISTER',
          'Max-Forwards: 70',
          'Via: SIP/2.0/UDP 192.0.2.21:5060;branch=z9hG4bKkdjuw',
          'Contact: <name:John_Smith>',
          'l: 0',
        ]),
      ),
    );
    expect(parseNameAddr(unksm.headers.get('To')!)?.uri).toBe('isbn:2983792873');
    expect(parseUri(parseNameAddr(unksm.headers.get('From')!)!.uri)).toBeNull();

    const novelsc = request(
      parse(
        wire([
          'OPTIONS soap.beep://192.0.2.103:3002 SIP/2.0',
          'To: sip:user@example.com',
          'From: sip:caller@example.net;tag=384',
          'Max-Forwards: 3',
          'Call-ID: novelsc.asdfasser0q239nvn',
          'CSeq: 3923239 OPTIONS',
          'Via: SIP/2.0/UDP host5.example.net;branch=z9hG4bKkdjuw',
          'l: 0',
        ]),
      ),
    );
    expect(novelsc.uri).toBe('soap.beep://192.0.2.103:3002');
    expect(parseUri(novelsc.uri)).toBeNull();
  });

  const invalid: [name: string, bytes: Buffer, respondable: boolean, reason: RegExp][] = [
    [
      'badinv01',
      wire(
        [
          'INVITE sip:user@example.com SIP/2.0',
          'To: sip:j.user@example.com',
          'From: sip:caller@example.net;tag=134161461246',
          'Max-Forwards: 7',
          'Call-ID: badinv01.0ha0isndaksdjasdf3234nas',
          'CSeq: 8 INVITE',
          'Via: SIP/2.0/UDP 192.0.2.15;;,;,,',
          'Contact: "Joe" <sip:joe@example.org>;;;;',
          'Content-Type: application/sdp',
          'Content-Length: {{len}}',
        ],
        TORTURE_SDP,
      ),
      // The topmost Via is what a response is routed by; garbage there leaves nowhere to answer.
      false,
      /Via/,
    ],
    [
      'clerr',
      wire(
        [
          'INVITE sip:user@example.com SIP/2.0',
          'Max-Forwards: 80',
          'To: sip:j.user@example.com',
          'From: sip:caller@example.net;tag=93942939o2',
          'Contact: <sip:caller@hungry.example.net>',
          'Call-ID: clerr.0ha0isndaksdjweiafasdk3',
          'CSeq: 8 INVITE',
          'Via: SIP/2.0/UDP host5.example.com;branch=z9hG4bK-39234-23523',
          'Content-Type: application/sdp',
          'Content-Length: 9999',
        ],
        TORTURE_SDP,
      ),
      true,
      /Content-Length 9999 exceeds/,
    ],
    [
      'ncl',
      wire(
        [
          'INVITE sip:user@example.com SIP/2.0',
          'Max-Forwards: 254',
          'To: sip:j.user@example.com',
          'From: sip:caller@example.net;tag=32394234',
          'Call-ID: ncl.0ha0isndaksdj2193423r542w35',
          'CSeq: 0 INVITE',
          'Via: SIP/2.0/UDP 192.0.2.53;branch=z9hG4bKkdjuw',
          'Contact: <sip:caller@example53.example.net>',
          'Content-Type: application/sdp',
          'Content-Length: -999',
        ],
        TORTURE_SDP,
      ),
      true,
      /invalid Content-Length/,
    ],
    [
      'scalar02',
      wire([
        'REGISTER sip:example.com SIP/2.0',
        'Via: SIP/2.0/TCP host129.example.com;branch=z9hG4bK342sdfoi3',
        'To: <sip:user@example.com>',
        'From: <sip:user@example.com>;tag=239232jh3',
        'CSeq: 36893488147419103232 REGISTER',
        'Call-ID: scalar02.23o0pd9vanlq3wnrlnewofjas9ui32',
        'Max-Forwards: 300',
        'Expires: 1000000000000000000000000000000000000000000',
        'Contact: <sip:user@host129.example.com>',
        '  ;expires=280297596632815',
        'Content-Length: 0',
      ]),
      true,
      /CSeq number out of range/,
    ],
    [
      'scalar02 (huge Content-Length)',
      wire([
        'REGISTER sip:example.com SIP/2.0',
        'Via: SIP/2.0/TCP host129.example.com;branch=z9hG4bK342sdfoi3',
        'To: <sip:user@example.com>',
        'From: <sip:user@example.com>;tag=239232jh3',
        'CSeq: 1 REGISTER',
        'Call-ID: scalar02.b',
        'Max-Forwards: 70',
        'Content-Length: 99999999999999999999999999999999999999',
      ]),
      true,
      /Content-Length too large/,
    ],
    [
      'scalar02 (Max-Forwards 300)',
      wire([
        'OPTIONS sip:example.com SIP/2.0',
        'Via: SIP/2.0/UDP host129.example.com;branch=z9hG4bK342sdfoi3',
        'To: <sip:user@example.com>',
        'From: <sip:user@example.com>;tag=239232jh3',
        'CSeq: 1 OPTIONS',
        'Call-ID: scalar02.c',
        'Max-Forwards: 300',
        'Content-Length: 0',
      ]),
      true,
      /Max-Forwards/,
    ],
    [
      'insuf',
      wire(
        [
          'INVITE sip:user@example.com SIP/2.0',
          'CSeq: 193942 INVITE',
          'Via: SIP/2.0/UDP 192.0.2.95;branch=z9hG4bKkdj.insuf',
          'Content-Type: application/sdp',
          'l: {{len}}',
        ],
        TORTURE_SDP,
      ),
      false,
      /missing From/,
    ],
    [
      'mismatch01',
      wire([
        'OPTIONS sip:user@example.com SIP/2.0',
        'To: sip:j.user@example.com',
        'From: sip:caller@example.net;tag=34525',
        'Max-Forwards: 6',
        'Call-ID: mismatch01.dj0234sxdfl3',
        'CSeq: 8 INVITE',
        'Via: SIP/2.0/UDP host.example.com;branch=z9hG4bKkdjuw',
        'l: 0',
      ]),
      true,
      /CSeq method/,
    ],
    [
      'multi01 (two Call-IDs)',
      wire([
        'INVITE sip:user@company.com SIP/2.0',
        'Via: SIP/2.0/UDP 192.0.2.25;branch=z9hG4bKvbmn',
        'Max-Forwards: 70',
        'To: sip:user@company.com',
        'From: sip:caller@university.edu;tag=2392034',
        'Call-ID: multi01.98asdh@192.0.2.1',
        'Call-ID: multi01.98asdh@192.0.2.2',
        'CSeq: 1 INVITE',
        'Content-Length: 0',
      ]),
      true,
      /more than one Call-ID/,
    ],
    [
      'lwsruri (extra space in the request line)',
      wire([
        'INVITE  sip:user@example.com SIP/2.0',
        'Via: SIP/2.0/UDP 192.0.2.25;branch=z9hG4bKvbmn',
        'To: sip:user@example.com',
        'From: sip:caller@example.net;tag=1',
        'Call-ID: lwsruri',
        'CSeq: 1 INVITE',
        'Content-Length: 0',
      ]),
      false,
      /request line/,
    ],
    [
      'a response is never respondable',
      wire([
        'SIP/2.0 200 OK',
        'Via: SIP/2.0/UDP a.example.com;branch=z9hG4bK1',
        'CSeq: 1 INVITE',
        'Content-Length: 0',
      ]),
      false,
      /missing From/,
    ],
  ];

  it.each(invalid)('%s is rejected', (_name, bytes, respondable, reason) => {
    const result = parse(bytes);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toMatch(reason);
    expect(result.respondable).toBe(respondable);
    if (respondable) expect(result.partial && isRequest(result.partial)).toBe(true);
  });
});

describe('hostile input', () => {
  const seeds = [
    wire(INVITE_LINES, SDP),
    wire(INVITE_LINES, '你好，世界'),
    wire([
      'SIP/2.0 180 Ringing',
      'Via: SIP/2.0/UDP [2001:db8::1]:5060;branch=z9hG4bK1;rport=5060',
      'To: "Zhang, San" <sip:user@example.com>;tag=2',
      'From: <sip:caller@example.com>;tag=1',
      'Call-ID: fuzz',
      'CSeq: 1 INVITE',
      'Content-Length: 0',
    ]),
  ];

  it('never throws and answers quickly on random bytes and mutated messages', () => {
    const random = new Random('sip-message-fuzz');
    const alphabet = Buffer.from(' \t\r\n:;,<>"\\@[]=%/0123456789abcSIPsip\xff');
    // CPU time, not wall time: a starved CI machine must not fail a test about backtracking.
    const cpuMs = (since?: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since);
      return (used.user + used.system) / 1000;
    };
    const started = process.cpuUsage();
    let slowest = 0;
    let slowestInput: Buffer = Buffer.alloc(0);
    for (let i = 0; i < 4000; i++) {
      let input: Buffer;
      const seed = seeds[random.int(0, seeds.length - 1)]!;
      switch (i % 4) {
        case 0:
          input = Buffer.from(Array.from({ length: random.int(0, 600) }, () => random.int(0, 255)));
          break;
        case 1:
          input = seed.subarray(0, random.int(0, seed.length));
          break;
        case 2: {
          input = Buffer.from(seed);
          for (let n = random.int(1, 8); n > 0; n--)
            input[random.int(0, input.length - 1)] = alphabet[random.int(0, alphabet.length - 1)]!;
          break;
        }
        default: {
          const at = random.int(0, seed.length);
          const filler = Buffer.alloc(random.int(1, 5000), alphabet[random.int(0, alphabet.length - 1)]!);
          input = Buffer.concat([seed.subarray(0, at), filler, seed.subarray(at)]);
        }
      }
      const before = process.cpuUsage();
      const result = parse(input);
      const spent = cpuMs(before);
      if (spent > slowest) {
        slowest = spent;
        slowestInput = input;
      }
      expect(typeof result.ok).toBe('boolean');
      if (!result.ok) expect(result.reason).not.toMatch(/^parser error/);

      const framer = createStreamFramer(
        () => {},
        () => {},
        { maxMessageBytes: 4096 },
      );
      framer.push(input.subarray(0, input.length >> 1));
      framer.push(input.subarray(input.length >> 1));
    }
    // process.cpuUsage counts every thread of the process, and the test runner's other workers
    // share it: the slowest input is timed again, and a pathological one is slow every time.
    const again = Array.from({ length: 5 }, () => {
      const before = process.cpuUsage();
      parse(slowestInput);
      return cpuMs(before);
    });
    expect(Math.min(slowest, ...again)).toBeLessThan(50);
    expect(cpuMs(started)).toBeLessThan(10_000);
  });
});
