/**
 * G.711 (ITU-T) A-law (PCMA) and μ-law (PCMU), by lookup table.
 *
 * Every 20 ms every call encodes 160 samples and decodes 160 more; two table reads per sample
 * cost less than the segment search, and the 64K encode tables (128 KB for both laws) are built
 * once per thread. The tables are derived from the segment arithmetic of the recommendation.
 */

export type G711Codec = 'PCMA' | 'PCMU';

/** The static RTP payload types of RFC 3551. */
export const STATIC_PAYLOAD_TYPE: Record<G711Codec, number> = { PCMU: 0, PCMA: 8 };

/** Upper ends of the A-law segments, on the 13-bit magnitude. */
const ALAW_SEGMENT_END = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];
/** Upper ends of the μ-law segments, on the biased 14-bit magnitude. */
const ULAW_SEGMENT_END = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff];
const ULAW_BIAS = 0x84;
const ULAW_CLIP = 8159;

function segmentOf(value: number, ends: readonly number[]): number {
  for (let segment = 0; segment < ends.length; segment++) {
    if (value <= (ends[segment] as number)) return segment;
  }
  return ends.length;
}

function alawEncodeSample(sample: number): number {
  let value = sample >> 3;
  let mask: number;
  if (value >= 0) {
    mask = 0xd5;
  } else {
    mask = 0x55;
    value = -value - 1;
  }
  const segment = segmentOf(value, ALAW_SEGMENT_END);
  if (segment >= 8) return 0x7f ^ mask;
  const mantissa = segment < 2 ? (value >> 1) & 0x0f : (value >> segment) & 0x0f;
  return ((segment << 4) | mantissa) ^ mask;
}

function alawDecodeByte(byte: number): number {
  const value = byte ^ 0x55;
  const segment = (value & 0x70) >> 4;
  let magnitude = (value & 0x0f) << 4;
  if (segment === 0) magnitude += 8;
  else magnitude = (magnitude + 0x108) << (segment - 1);
  return value & 0x80 ? magnitude : -magnitude;
}

function ulawEncodeSample(sample: number): number {
  let value = sample >> 2;
  let mask: number;
  if (value < 0) {
    value = -value;
    mask = 0x7f;
  } else {
    mask = 0xff;
  }
  value = Math.min(value, ULAW_CLIP) + (ULAW_BIAS >> 2);
  const segment = segmentOf(value, ULAW_SEGMENT_END);
  if (segment >= 8) return 0x7f ^ mask;
  return ((segment << 4) | ((value >> (segment + 1)) & 0x0f)) ^ mask;
}

function ulawDecodeByte(byte: number): number {
  const value = ~byte & 0xff;
  const magnitude = ((((value & 0x0f) << 3) + ULAW_BIAS) << ((value & 0x70) >> 4)) - ULAW_BIAS;
  return value & 0x80 ? -magnitude : magnitude;
}

function buildEncodeTable(encode: (sample: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  // Indexed by the sample's 16-bit two's-complement pattern, so a lookup is `table[s & 0xffff]`.
  for (let sample = -32768; sample < 32768; sample++) table[sample & 0xffff] = encode(sample);
  return table;
}

function buildDecodeTable(decode: (byte: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let byte = 0; byte < 256; byte++) table[byte] = decode(byte);
  return table;
}

export const ALAW_ENCODE = buildEncodeTable(alawEncodeSample);
export const ALAW_DECODE = buildDecodeTable(alawDecodeByte);
export const ULAW_ENCODE = buildEncodeTable(ulawEncodeSample);
export const ULAW_DECODE = buildDecodeTable(ulawDecodeByte);

/** The code of a zero sample: what a silent frame is filled with. */
export const SILENCE_BYTE: Record<G711Codec, number> = { PCMA: 0xd5, PCMU: 0xff };

const ENCODE: Record<G711Codec, Uint8Array> = { PCMA: ALAW_ENCODE, PCMU: ULAW_ENCODE };
const DECODE: Record<G711Codec, Int16Array> = { PCMA: ALAW_DECODE, PCMU: ULAW_DECODE };

/** Encodes 16-bit linear samples; writes into `out` when given (it must be at least as long). */
export function encodeG711(codec: G711Codec, pcm: Int16Array, out = new Uint8Array(pcm.length)): Uint8Array {
  const table = ENCODE[codec];
  for (let i = 0; i < pcm.length; i++) out[i] = table[(pcm[i] as number) & 0xffff] as number;
  return out;
}

/** Decodes G.711 bytes to 16-bit linear samples; writes into `out` when given. */
export function decodeG711(
  codec: G711Codec,
  bytes: Uint8Array,
  out = new Int16Array(bytes.length),
): Int16Array {
  const table = DECODE[codec];
  for (let i = 0; i < bytes.length; i++) out[i] = table[bytes[i] as number] as number;
  return out;
}
