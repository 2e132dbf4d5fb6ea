import { describe, expect, it } from 'vitest';
import {
  ALAW_DECODE,
  ALAW_ENCODE,
  decodeG711,
  encodeG711,
  SILENCE_BYTE,
  ULAW_DECODE,
  ULAW_ENCODE,
} from './g711';

/*
 * A second implementation written from the recommendation's description (segment e, mantissa m,
 * reconstruction at the middle of each interval) with powers of two rather than shifts and
 * segment-end tables, so an error in the tables' construction cannot hide in both.
 */
const reference = {
  ulawDecode(byte: number): number {
    const inverted = 255 - byte;
    const e = Math.floor(inverted / 16) % 8;
    const m = inverted % 16;
    const magnitude = 4 * ((2 * m + 33) * 2 ** e - 33);
    return inverted >= 128 && magnitude !== 0 ? -magnitude : magnitude;
  },
  alawDecode(byte: number): number {
    const toggled = byte ^ 0x55;
    const e = Math.floor(toggled / 16) % 8;
    const m = toggled % 16;
    const magnitude = e === 0 ? 8 * (2 * m + 1) : 8 * (2 * m + 33) * 2 ** (e - 1);
    return toggled >= 128 ? magnitude : -magnitude;
  },
  ulawEncode(sample: number): number {
    const v = Math.floor(sample / 4);
    const negative = v < 0;
    const biased = Math.min(Math.abs(v), 8159) + 33;
    let e = Math.floor(Math.log2(biased)) - 5;
    let m = Math.floor(biased / 2 ** (e + 1)) - 16;
    if (e > 7) [e, m] = [7, 15];
    return 255 - ((negative ? 128 : 0) + 16 * e + m);
  },
  alawEncode(sample: number): number {
    const v = Math.floor(sample / 8);
    const positive = v >= 0;
    const magnitude = positive ? v : -v - 1;
    const e = magnitude < 32 ? 0 : Math.floor(Math.log2(magnitude)) - 4;
    const m = e === 0 ? Math.floor(magnitude / 2) : Math.floor((magnitude - 16 * 2 ** e) / 2 ** e);
    return ((positive ? 128 : 0) + 16 * e + m) ^ 0x55;
  },
};

describe('G.711 μ-law (PCMU)', () => {
  it('matches the ITU-T reference values', () => {
    expect(ULAW_ENCODE[0]).toBe(0xff);
    expect(ULAW_DECODE[0x00]).toBe(-32124);
    expect(ULAW_DECODE[0x80]).toBe(32124);
    expect(ULAW_DECODE[0xff]).toBe(0);
    expect(ULAW_DECODE[0x7f]).toBe(0);
    expect(reference.ulawEncode(0)).toBe(0xff);
    expect(reference.ulawDecode(0x00)).toBe(-32124);
    expect(reference.ulawDecode(0x80)).toBe(32124);
  });

  it('decodes all 256 codes as the formula does', () => {
    for (let byte = 0; byte < 256; byte++) expect(ULAW_DECODE[byte]).toBe(reference.ulawDecode(byte));
  });

  it('encodes every 16-bit sample as the formula does', () => {
    const mismatches: number[] = [];
    for (let s = -32768; s < 32768; s++) {
      if (ULAW_ENCODE[s & 0xffff] !== reference.ulawEncode(s)) mismatches.push(s);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });
});

describe('G.711 A-law (PCMA)', () => {
  it('matches the ITU-T reference values', () => {
    expect(ALAW_ENCODE[0]).toBe(0xd5);
    expect(ALAW_DECODE[0x55]).toBe(-8);
    expect(ALAW_DECODE[0xd5]).toBe(8);
    expect(ALAW_DECODE[0xaa]).toBe(32256);
    expect(ALAW_DECODE[0x2a]).toBe(-32256);
    expect(reference.alawEncode(0)).toBe(0xd5);
    expect(reference.alawDecode(0x55)).toBe(-8);
    expect(reference.alawDecode(0xd5)).toBe(8);
  });

  it('decodes all 256 codes as the formula does', () => {
    for (let byte = 0; byte < 256; byte++) expect(ALAW_DECODE[byte]).toBe(reference.alawDecode(byte));
  });

  it('encodes every 16-bit sample as the formula does', () => {
    const mismatches: number[] = [];
    for (let s = -32768; s < 32768; s++) {
      if (ALAW_ENCODE[s & 0xffff] !== reference.alawEncode(s)) mismatches.push(s);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });
});

describe('G.711 buffers', () => {
  it('round-trips speech-level samples within half a quantisation step, for both laws', () => {
    const pcm = Int16Array.from({ length: 160 }, (_, i) =>
      Math.round(12000 * Math.sin((2 * Math.PI * i) / 8)),
    );
    for (const codec of ['PCMA', 'PCMU'] as const) {
      const bytes = encodeG711(codec, pcm);
      expect(bytes.every((b) => b >= 0 && b <= 255)).toBe(true);
      const back = decodeG711(codec, bytes);
      for (let i = 0; i < pcm.length; i++) {
        // Above 8192 the step is 512 (A-law) or 1024 (μ-law) in 16-bit units.
        expect(Math.abs((back[i] as number) - (pcm[i] as number))).toBeLessThanOrEqual(512);
      }
    }
  });

  it('a frame of zeros encodes to the silence code and decodes to near-zero', () => {
    for (const codec of ['PCMA', 'PCMU'] as const) {
      const bytes = encodeG711(codec, new Int16Array(160));
      expect(new Set(bytes)).toEqual(new Set([SILENCE_BYTE[codec]]));
      expect(Math.max(...decodeG711(codec, bytes).map(Math.abs))).toBeLessThanOrEqual(8);
    }
  });

  it('writes into a caller-provided buffer', () => {
    const out = new Uint8Array(4);
    expect(encodeG711('PCMU', Int16Array.of(0, 0, 0, 0), out)).toBe(out);
    expect([...out]).toEqual([0xff, 0xff, 0xff, 0xff]);
  });
});
