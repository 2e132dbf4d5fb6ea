/**
 * RTP packets (RFC 3550 §5.1). Parsing never throws: every datagram reaching an RTP port comes
 * from the network (scanners and stray RTCP included), and a bad one is dropped and counted.
 */

export interface RtpHeaderExtension {
  /** The 16-bit profile-defined value (0xBEDE for RFC 8285 one-byte headers). */
  profile: number;
  /** The extension body, a multiple of 4 bytes. */
  data: Uint8Array;
}

export interface RtpPacket {
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  csrc: number[];
  extension: RtpHeaderExtension | null;
  payload: Uint8Array;
  /** Padding octets that followed the payload (0 when the P bit was clear). */
  paddingLength: number;
}

export type RtpParseResult = { ok: true; packet: RtpPacket } | { ok: false; reason: string };

const FIXED_HEADER = 12;

export function parseRtp(datagram: Uint8Array): RtpParseResult {
  if (datagram.length < FIXED_HEADER) return { ok: false, reason: 'shorter than the fixed header' };
  const view = new DataView(datagram.buffer, datagram.byteOffset, datagram.byteLength);
  const first = datagram[0] as number;
  const second = datagram[1] as number;
  if (first >> 6 !== 2) return { ok: false, reason: `version ${first >> 6}` };
  // RTCP multiplexed on the RTP port (RFC 5761 §4) carries its packet type (192-223) in this byte.
  if (second >= 192 && second <= 223) return { ok: false, reason: 'RTCP packet' };
  const hasPadding = (first & 0x20) !== 0;
  const hasExtension = (first & 0x10) !== 0;
  const csrcCount = first & 0x0f;
  let offset = FIXED_HEADER + csrcCount * 4;
  if (offset > datagram.length) return { ok: false, reason: 'CSRC list past the end' };
  const csrc: number[] = [];
  for (let i = 0; i < csrcCount; i++) csrc.push(view.getUint32(FIXED_HEADER + i * 4));

  let extension: RtpHeaderExtension | null = null;
  if (hasExtension) {
    if (offset + 4 > datagram.length) return { ok: false, reason: 'extension header past the end' };
    const profile = view.getUint16(offset);
    const words = view.getUint16(offset + 2);
    const start = offset + 4;
    const end = start + words * 4;
    if (end > datagram.length) return { ok: false, reason: 'extension past the end' };
    extension = { profile, data: datagram.subarray(start, end) };
    offset = end;
  }

  let end = datagram.length;
  let paddingLength = 0;
  if (hasPadding) {
    paddingLength = datagram[datagram.length - 1] as number;
    // The count includes itself, so 0 is invalid, and padding cannot eat into the header.
    if (paddingLength === 0 || offset + paddingLength > datagram.length) {
      return { ok: false, reason: 'bad padding length' };
    }
    end -= paddingLength;
  }

  return {
    ok: true,
    packet: {
      marker: (second & 0x80) !== 0,
      payloadType: second & 0x7f,
      sequenceNumber: view.getUint16(2),
      timestamp: view.getUint32(4),
      ssrc: view.getUint32(8),
      csrc,
      extension,
      payload: datagram.subarray(offset, end),
      paddingLength,
    },
  };
}

export interface RtpPacketInput {
  marker?: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  csrc?: readonly number[];
  extension?: RtpHeaderExtension | null;
  payload: Uint8Array;
  /** Padding octets to append (1-255); 0 or absent for none. */
  paddingLength?: number;
}

export function serializeRtp(packet: RtpPacketInput): Buffer {
  const csrc = packet.csrc ?? [];
  if (csrc.length > 15) throw new RangeError('at most 15 CSRCs');
  const extension = packet.extension ?? null;
  if (extension && extension.data.length % 4 !== 0) {
    throw new RangeError('extension data must be a multiple of 4 bytes');
  }
  const padding = packet.paddingLength ?? 0;
  if (padding < 0 || padding > 255) throw new RangeError('padding must be 0-255 bytes');
  const headerLength = FIXED_HEADER + csrc.length * 4 + (extension ? 4 + extension.data.length : 0);
  const buffer = Buffer.allocUnsafe(headerLength + packet.payload.length + padding);
  buffer[0] = 0x80 | (padding ? 0x20 : 0) | (extension ? 0x10 : 0) | csrc.length;
  buffer[1] = (packet.marker ? 0x80 : 0) | (packet.payloadType & 0x7f);
  buffer.writeUInt16BE(packet.sequenceNumber & 0xffff, 2);
  buffer.writeUInt32BE(packet.timestamp >>> 0, 4);
  buffer.writeUInt32BE(packet.ssrc >>> 0, 8);
  let offset = FIXED_HEADER;
  for (const id of csrc) {
    buffer.writeUInt32BE(id >>> 0, offset);
    offset += 4;
  }
  if (extension) {
    buffer.writeUInt16BE(extension.profile & 0xffff, offset);
    buffer.writeUInt16BE(extension.data.length / 4, offset + 2);
    buffer.set(extension.data, offset + 4);
    offset += 4 + extension.data.length;
  }
  buffer.set(packet.payload, offset);
  offset += packet.payload.length;
  if (padding) {
    buffer.fill(0, offset, offset + padding - 1);
    buffer[offset + padding - 1] = padding;
  }
  return buffer;
}

/** a - b on the 16-bit sequence-number circle, in -32768..32767 (RFC 1982 serial arithmetic). */
export function seqDelta(a: number, b: number): number {
  return ((((a - b) & 0xffff) + 0x8000) & 0xffff) - 0x8000;
}

/** a - b on the 32-bit timestamp circle, as a signed 32-bit number. */
export function timestampDelta(a: number, b: number): number {
  return (a - b) | 0;
}
