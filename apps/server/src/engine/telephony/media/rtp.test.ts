import { describe, expect, it } from 'vitest';
import { parseRtp, type RtpPacket, seqDelta, serializeRtp, timestampDelta } from './rtp';

const parsed = (bytes: Uint8Array): RtpPacket => {
  const result = parseRtp(bytes);
  if (!result.ok) throw new Error(result.reason);
  return result.packet;
};

describe('RTP packets', () => {
  it('reads a hand-assembled PCMA packet field by field', () => {
    const bytes = Uint8Array.from([
      0x80, 0x88, 0x12, 0x34, 0x00, 0x01, 0xe2, 0x40, 0xde, 0xad, 0xbe, 0xef, 0xd5, 0xd5, 0xd5,
    ]);
    const packet = parsed(bytes);
    expect(packet).toMatchObject({
      marker: true,
      payloadType: 8,
      sequenceNumber: 0x1234,
      timestamp: 123456,
      ssrc: 0xdeadbeef,
      csrc: [],
      extension: null,
      paddingLength: 0,
    });
    expect([...packet.payload]).toEqual([0xd5, 0xd5, 0xd5]);
  });

  it('round-trips CSRCs, a header extension and padding', () => {
    const input = {
      marker: false,
      payloadType: 101,
      sequenceNumber: 65535,
      timestamp: 0xffffffff,
      ssrc: 1,
      csrc: [7, 0x80000000],
      extension: { profile: 0xbede, data: Uint8Array.of(0x10, 0xaa, 0, 0) },
      payload: Uint8Array.of(1, 2, 3, 4),
      paddingLength: 3,
    };
    const bytes = serializeRtp(input);
    expect(bytes.length).toBe(12 + 8 + 8 + 4 + 3);
    expect(bytes[0]).toBe(0x80 | 0x20 | 0x10 | 2);
    const packet = parsed(bytes);
    expect(packet.csrc).toEqual([7, 0x80000000]);
    expect(packet.extension?.profile).toBe(0xbede);
    expect([...(packet.extension?.data ?? [])]).toEqual([0x10, 0xaa, 0, 0]);
    expect([...packet.payload]).toEqual([1, 2, 3, 4]);
    expect(packet.paddingLength).toBe(3);
    expect(packet.timestamp).toBe(0xffffffff);
    expect(packet.sequenceNumber).toBe(65535);
  });

  it('rejects malformed datagrams with a reason instead of throwing', () => {
    const good = serializeRtp({
      payloadType: 0,
      sequenceNumber: 1,
      timestamp: 1,
      ssrc: 1,
      payload: new Uint8Array(4),
    });
    const cases: Array<[string, Uint8Array]> = [
      ['empty', new Uint8Array(0)],
      ['short', good.subarray(0, 11)],
      ['version 1', Uint8Array.from(good, (b, i) => (i === 0 ? 0x40 : b))],
      ['CSRC count past the end', Uint8Array.from(good, (b, i) => (i === 0 ? 0x8f : b))],
      ['extension past the end', Uint8Array.from(good, (b, i) => (i === 0 ? 0x90 : i === 15 ? 5 : b))],
      [
        'extension header past the end',
        Uint8Array.from(good.subarray(0, 14), (b, i) => (i === 0 ? 0x90 : b)),
      ],
      [
        'padding longer than the packet',
        Uint8Array.from([...good.subarray(0, 15), 200], (b, i) => (i === 0 ? 0xa0 : b)),
      ],
      ['zero padding count', Uint8Array.from([...good.subarray(0, 15), 0], (b, i) => (i === 0 ? 0xa0 : b))],
      ['RTCP receiver report', Uint8Array.from([0x81, 201, 0, 7, ...new Array(28).fill(0)])],
    ];
    for (const [name, bytes] of cases) {
      const result = parseRtp(bytes);
      expect(result.ok, name).toBe(false);
    }
    let state = 1;
    for (let i = 0; i < 2000; i++) {
      const bytes = new Uint8Array(i % 40);
      for (let j = 0; j < bytes.length; j++) {
        state = (state * 1103515245 + 12345) >>> 0;
        bytes[j] = state >>> 24;
      }
      expect(() => parseRtp(bytes)).not.toThrow();
    }
  });

  it('compares sequence numbers and timestamps across the wrap', () => {
    expect(seqDelta(2, 65534)).toBe(4);
    expect(seqDelta(65534, 2)).toBe(-4);
    expect(seqDelta(100, 100)).toBe(0);
    expect(timestampDelta(80, 0xffffff00)).toBe(336);
  });
});
