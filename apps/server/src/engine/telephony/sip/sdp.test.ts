import { describe, expect, it } from 'vitest';
import {
  answerOffer,
  applyAnswer,
  createOffer,
  createReoffer,
  type NegotiatedMedia,
  readOrigin,
} from './sdp';

const sdp = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;
const local = { address: '192.0.2.10', port: 40000, sessionId: '42' };

/** The m= lines and a= lines of a description, the parts a peer acts on. */
const mLines = (text: string) => text.split('\r\n').filter((line) => line.startsWith('m='));
const attributes = (text: string) => text.split('\r\n').filter((line) => line.startsWith('a='));

// SIPp's built-in uac_pcap scenario (`sipp -sd uac_pcap`), addresses filled in.
const SIPP_PCMA = sdp(
  'v=0',
  'o=user1 53655765 2353687637 IN IP4 127.0.0.1',
  's=-',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 6000 RTP/AVP 8 101',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-11,16',
);

// SIPp's default uac scenario: PCMU only, no telephone-event.
const SIPP_PCMU = sdp(
  'v=0',
  'o=user1 53655765 2353687637 IN IP4 127.0.0.1',
  's=-',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 6002 RTP/AVP 0',
  'a=rtpmap:0 PCMU/8000',
);

// Captured from Debian's baresip 1.0.0 (opus, g722 and g711 modules loaded) calling SIPp.
const BARESIP = sdp(
  'v=0',
  'o=- 3916422440 1886142038 IN IP4 192.0.2.2',
  's=-',
  'c=IN IP4 192.0.2.2',
  't=0 0',
  'a=tool:baresip 1.0.0',
  'm=audio 17428 RTP/AVP 96 9 0 8 101',
  'a=rtpmap:96 opus/48000/2',
  'a=fmtp:96 stereo=1;sprop-stereo=1;maxaveragebitrate=28000',
  'a=rtpmap:9 G722/8000',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-15',
  'a=sendrecv',
  'a=label:1',
  'a=rtcp-rsize',
  'a=ssrc:1216924805 cname:sip:bot@127.0.0.1',
  'a=minptime:20',
  'a=ptime:20',
);

// A carrier SBC: PCMU only, telephone-event on 96, media-level c= overriding the session's.
const CARRIER_PCMU_96 = sdp(
  'v=0',
  'o=SBC 1700000000 1700000001 IN IP4 203.0.113.5',
  's=SBC call',
  'c=IN IP4 203.0.113.5',
  't=0 0',
  'm=audio 31000 RTP/AVP 0 96',
  'c=IN IP4 203.0.113.77',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:96 telephone-event/8000',
  'a=fmtp:96 0-15',
  'a=ptime:20',
  'a=sendrecv',
);

const audioOffer = (mLine: string, ...extra: string[]) =>
  sdp('v=0', 'o=- 1 1 IN IP4 198.51.100.1', 's=-', 'c=IN IP4 198.51.100.1', 't=0 0', mLine, ...extra);

describe('answerOffer', () => {
  type Row = [string, string, Partial<NegotiatedMedia>, string];
  it.each<Row>([
    [
      'SIPp pcma offer',
      SIPP_PCMA,
      {
        remoteAddress: '127.0.0.1',
        remotePort: 6000,
        codec: 'PCMA',
        payloadType: 8,
        telephoneEventPayloadType: 101,
      },
      'm=audio 40000 RTP/AVP 8 101',
    ],
    [
      'SIPp default offer without telephone-event',
      SIPP_PCMU,
      { remotePort: 6002, codec: 'PCMU', payloadType: 0, telephoneEventPayloadType: null },
      'm=audio 40000 RTP/AVP 0',
    ],
    [
      "baresip's many-codec offer (our PCMA preference wins over its order)",
      BARESIP,
      {
        remoteAddress: '192.0.2.2',
        remotePort: 17428,
        codec: 'PCMA',
        payloadType: 8,
        telephoneEventPayloadType: 101,
      },
      'm=audio 40000 RTP/AVP 8 101',
    ],
    [
      'carrier offer with PCMU and telephone-event 96',
      CARRIER_PCMU_96,
      { remoteAddress: '203.0.113.77', remotePort: 31000, codec: 'PCMU', telephoneEventPayloadType: 96 },
      'm=audio 40000 RTP/AVP 0 96',
    ],
    [
      'static payload types without rtpmap',
      audioOffer('m=audio 4000 RTP/AVP 18 0 8'),
      { codec: 'PCMA', payloadType: 8, telephoneEventPayloadType: null },
      'm=audio 40000 RTP/AVP 8',
    ],
    [
      'PCMU under a dynamic payload type, lower-case names',
      audioOffer('m=audio 4000 RTP/AVP 97 100', 'a=rtpmap:97 pcmu/8000', 'a=rtpmap:100 Telephone-Event/8000'),
      { codec: 'PCMU', payloadType: 97, telephoneEventPayloadType: 100 },
      'm=audio 40000 RTP/AVP 97 100',
    ],
    [
      'wideband telephone-event ignored',
      audioOffer(
        'm=audio 4000 RTP/AVP 9 8 102',
        'a=rtpmap:9 G722/8000',
        'a=rtpmap:102 telephone-event/16000',
      ),
      { codec: 'PCMA', telephoneEventPayloadType: null },
      'm=audio 40000 RTP/AVP 8',
    ],
    [
      'ptime 30',
      audioOffer('m=audio 4000 RTP/AVP 8', 'a=ptime:30'),
      { ptime: 30 },
      'm=audio 40000 RTP/AVP 8',
    ],
  ])('%s', (_name, offer, expected, mLine) => {
    const result = answerOffer(offer, local);
    if (!result.ok) throw new Error(result.reason);
    expect(result.negotiated).toMatchObject({
      ptime: 20,
      direction: 'sendrecv',
      remoteHold: false,
      ...expected,
    });
    expect(mLines(result.sdp)).toEqual([mLine]);
    expect(result.sdp).toContain('c=IN IP4 192.0.2.10\r\n');
  });

  it('answers in full what a peer reads', () => {
    const result = answerOffer(SIPP_PCMA, local);
    expect(result.ok && result.sdp).toBe(
      sdp(
        'v=0',
        'o=- 42 1 IN IP4 192.0.2.10',
        's=-',
        'c=IN IP4 192.0.2.10',
        't=0 0',
        'm=audio 40000 RTP/AVP 8 101',
        'a=rtpmap:8 PCMA/8000',
        'a=rtpmap:101 telephone-event/8000',
        'a=fmtp:101 0-15',
        'a=ptime:20',
        'a=sendrecv',
      ),
    );
  });

  it('honours the configured codec order', () => {
    const result = answerOffer(BARESIP, { ...local, codecs: ['PCMU', 'PCMA'] });
    expect(result.ok && result.negotiated.codec).toBe('PCMU');
  });

  type DirectionRow = [
    string,
    string,
    string,
    { direction: string; remoteHold: boolean; remoteAddress?: string },
  ];
  it.each<DirectionRow>([
    [
      'a=sendonly (hold)',
      audioOffer('m=audio 4000 RTP/AVP 8', 'a=sendonly'),
      'a=recvonly',
      { direction: 'recvonly', remoteHold: true },
    ],
    [
      'a=inactive (hold)',
      audioOffer('m=audio 4000 RTP/AVP 8', 'a=inactive'),
      'a=inactive',
      { direction: 'inactive', remoteHold: true },
    ],
    [
      'c=0.0.0.0 (RFC 2543 hold)',
      sdp('v=0', 'o=- 1 2 IN IP4 198.51.100.1', 's=-', 'c=IN IP4 0.0.0.0', 't=0 0', 'm=audio 4000 RTP/AVP 8'),
      'a=recvonly',
      { direction: 'recvonly', remoteHold: true, remoteAddress: '0.0.0.0' },
    ],
    [
      'session-level a=sendonly',
      sdp(
        'v=0',
        'o=- 1 2 IN IP4 198.51.100.1',
        's=-',
        'c=IN IP4 198.51.100.1',
        't=0 0',
        'a=sendonly',
        'm=audio 4000 RTP/AVP 8',
      ),
      'a=recvonly',
      { direction: 'recvonly', remoteHold: true },
    ],
    [
      'a=recvonly (far end muted itself)',
      audioOffer('m=audio 4000 RTP/AVP 8', 'a=recvonly'),
      'a=sendonly',
      { direction: 'sendonly', remoteHold: false },
    ],
  ])('%s is answered with the mirror direction', (_name, offer, attribute, expected) => {
    const result = answerOffer(offer, local);
    if (!result.ok) throw new Error(result.reason);
    expect(result.negotiated).toMatchObject(expected);
    expect(attributes(result.sdp)).toContain(attribute);
  });

  it('keeps us on hold when we hold the far end and it re-offers sendrecv', () => {
    const result = answerOffer(SIPP_PCMA, { ...local, direction: 'sendonly' });
    expect(result.ok && result.negotiated.direction).toBe('sendonly');
    expect(result.ok && attributes(result.sdp)).toContain('a=sendonly');
  });

  it('declines video with port 0 and keeps the m-line order, whichever comes first', () => {
    const videoFirst = sdp(
      'v=0',
      'o=- 5 5 IN IP4 198.51.100.1',
      's=-',
      'c=IN IP4 198.51.100.1',
      't=0 0',
      'm=video 5002 RTP/AVP 96',
      'a=rtpmap:96 H264/90000',
      'm=audio 5000 RTP/AVP 0 8',
    );
    const result = answerOffer(videoFirst, local);
    if (!result.ok) throw new Error(result.reason);
    expect(mLines(result.sdp)).toEqual(['m=video 0 RTP/AVP 96', 'm=audio 40000 RTP/AVP 8']);
    expect(result.negotiated.remotePort).toBe(5000);
    expect(attributes(result.sdp)).not.toContain('a=rtpmap:96 H264/90000');
  });

  it('uses the first usable audio stream and declines a second one', () => {
    const twoAudio = audioOffer(
      'm=audio 5000 RTP/AVP 18',
      'm=audio 5002 RTP/AVP 8',
      'm=audio 5004 RTP/AVP 0',
    );
    const result = answerOffer(twoAudio, local);
    expect(result.ok && mLines(result.sdp)).toEqual([
      'm=audio 0 RTP/AVP 18',
      'm=audio 40000 RTP/AVP 8',
      'm=audio 0 RTP/AVP 0',
    ]);
  });

  it.each([
    [
      'no codec we carry',
      audioOffer('m=audio 4000 RTP/AVP 18 96', 'a=rtpmap:18 G729/8000', 'a=rtpmap:96 opus/48000/2'),
      /no common codec \(offered: G729, OPUS\)/,
    ],
    ['only secure RTP', audioOffer('m=audio 4000 RTP/SAVP 8'), /RTP\/SAVP/],
    ['video only', audioOffer('m=video 4000 RTP/AVP 96'), /no audio stream/],
    ['audio disabled by the offerer', audioOffer('m=audio 0 RTP/AVP 8'), /no audio stream/],
    ['stereo PCMA', audioOffer('m=audio 4000 RTP/AVP 98', 'a=rtpmap:98 PCMA/8000/2'), /no common codec/],
    ['not SDP', 'hello', /malformed/],
  ])('refuses %s (the UA answers 488)', (_name, offer, reason) => {
    const result = answerOffer(offer, local);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(reason);
  });

  it('writes IPv6 addresses as IP6', () => {
    const result = answerOffer(SIPP_PCMA, { ...local, address: '2001:db8::10' });
    expect(result.ok && result.sdp).toContain('c=IN IP6 2001:db8::10\r\n');
  });

  it('reports the remote o= version exactly, even past 2^53', () => {
    const big = audioOffer('m=audio 4000 RTP/AVP 8').replace('o=- 1 1', 'o=- 1 18446744073709551615');
    const result = answerOffer(big, local);
    expect(result.ok && result.negotiated.remoteOrigin).toEqual({
      sessionId: '1',
      version: '18446744073709551615',
    });
    expect(readOrigin(SIPP_PCMA)).toEqual({ sessionId: '53655765', version: '2353687637' });
  });

  it('re-answers a repeated offer with the same o= version and a changed one with the next', () => {
    const first = answerOffer(CARRIER_PCMU_96, local);
    if (!first.ok) throw new Error(first.reason);
    const refresh = answerOffer(CARRIER_PCMU_96, { ...local, previous: first.local });
    expect(refresh.ok && refresh.sdp).toBe(first.sdp);
    const hold = answerOffer(CARRIER_PCMU_96.replace('a=sendrecv', 'a=sendonly'), {
      ...local,
      previous: first.local,
    });
    if (!hold.ok) throw new Error(hold.reason);
    expect(hold.sdp).toContain('o=- 42 2 IN IP4 192.0.2.10');
    expect(hold.negotiated.remoteHold).toBe(true);
  });
});

describe('createOffer and applyAnswer', () => {
  it('offers PCMA, PCMU and telephone-event 101 at 20 ms by default', () => {
    const offer = createOffer(local);
    expect(mLines(offer.sdp)).toEqual(['m=audio 40000 RTP/AVP 8 0 101']);
    expect(attributes(offer.sdp)).toEqual([
      'a=rtpmap:8 PCMA/8000',
      'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=fmtp:101 0-15',
      'a=ptime:20',
      'a=sendrecv',
    ]);
    expect(offer.sdp).toContain('o=- 42 1 IN IP4 192.0.2.10');
  });

  it('reads a 183 early-media answer: the carrier only sends its announcement', () => {
    const offer = createOffer(local);
    const early = sdp(
      'v=0',
      'o=CarrierSBC 889 1 IN IP4 203.0.113.5',
      's=-',
      'c=IN IP4 203.0.113.5',
      't=0 0',
      'm=audio 30418 RTP/AVP 8 101',
      'a=rtpmap:8 PCMA/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=fmtp:101 0-15',
      'a=ptime:20',
      'a=sendonly',
    );
    const result = applyAnswer(offer, early);
    expect(result).toMatchObject({
      ok: true,
      negotiated: {
        remoteAddress: '203.0.113.5',
        remotePort: 30418,
        codec: 'PCMA',
        payloadType: 8,
        telephoneEventPayloadType: 101,
        direction: 'recvonly',
      },
    });
  });

  it('sends telephone-event with the payload type the answer chose, and expects ours back', () => {
    const result = applyAnswer(
      createOffer(local),
      audioOffer('m=audio 4000 RTP/AVP 0 96', 'a=rtpmap:96 telephone-event/8000'),
    );
    expect(result.ok && result.negotiated).toMatchObject({
      codec: 'PCMU',
      telephoneEventPayloadType: 96,
      receive: { payloadType: 0, telephoneEventPayloadType: 101 },
    });
  });

  it.each([
    ['audio rejected with port 0', audioOffer('m=audio 0 RTP/AVP 8'), /rejected/],
    ['a codec we did not offer', audioOffer('m=audio 4000 RTP/AVP 8'), /no offered codec/],
    ['more m-lines than offered', audioOffer('m=audio 4000 RTP/AVP 0', 'm=video 0 RTP/AVP 96'), /m-lines/],
  ])('refuses an answer with %s', (_name, answer, reason) => {
    const result = applyAnswer(createOffer({ ...local, codecs: ['PCMU'] }), answer);
    expect(!result.ok && result.reason).toMatch(reason);
  });

  it('holds with sendonly and unholds with sendrecv, each re-offer one o= version up', () => {
    const offer = createOffer(local);
    const hold = createReoffer(offer, { direction: 'sendonly' });
    const unhold = createReoffer(hold, { direction: 'sendrecv' });
    expect([hold.version, unhold.version]).toEqual([2, 3]);
    expect(hold.sdp).toContain('o=- 42 2 IN IP4 192.0.2.10');
    expect(attributes(hold.sdp)).toContain('a=sendonly');
    expect(attributes(unhold.sdp)).toContain('a=sendrecv');
    const answered = applyAnswer(hold, audioOffer('m=audio 4000 RTP/AVP 8', 'a=recvonly'));
    expect(answered.ok && answered.negotiated).toMatchObject({ direction: 'sendonly', remoteHold: false });
  });

  it('resends an unchanged description with the same o= version (session refresh)', () => {
    const offer = createOffer(local);
    const refresh = createReoffer(offer, {});
    expect(refresh.version).toBe(1);
    expect(refresh.sdp).toBe(offer.sdp);
  });

  it('re-offers the codec and telephone-event number an earlier answer settled', () => {
    const answered = answerOffer(CARRIER_PCMU_96, local);
    if (!answered.ok) throw new Error(answered.reason);
    const hold = createReoffer(answered.local, { direction: 'sendonly' });
    expect(mLines(hold.sdp)).toEqual(['m=audio 40000 RTP/AVP 0 8 96']);
    expect(hold.sdp).toContain('o=- 42 2 IN IP4 192.0.2.10');
  });

  it('keeps declined m-lines in a re-offer after answering a call with video', () => {
    const withVideo = sdp(
      'v=0',
      'o=- 5 5 IN IP4 198.51.100.1',
      's=-',
      'c=IN IP4 198.51.100.1',
      't=0 0',
      'm=audio 5000 RTP/AVP 8',
      'm=video 5002 RTP/AVP 96',
    );
    const answered = answerOffer(withVideo, local);
    if (!answered.ok) throw new Error(answered.reason);
    const hold = createReoffer(answered.local, { direction: 'sendonly' });
    expect(mLines(hold.sdp)).toEqual(['m=audio 40000 RTP/AVP 8 0 101', 'm=video 0 RTP/AVP 96']);
    const reply = sdp(
      'v=0',
      'o=- 5 6 IN IP4 198.51.100.1',
      's=-',
      'c=IN IP4 198.51.100.1',
      't=0 0',
      'm=audio 5000 RTP/AVP 8',
      'a=recvonly',
      'm=video 0 RTP/AVP 96',
    );
    expect(applyAnswer(hold, reply)).toMatchObject({ ok: true, negotiated: { direction: 'sendonly' } });
  });
});
