/** The PCM layout and samples of a RIFF/WAVE file, enough to measure and inspect synthesised speech. */
export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  dataOffset: number;
  dataBytes: number;
  durationMs: number;
}

export function readWav(buffer: Buffer): WavInfo {
  if (
    buffer.length < 12 ||
    buffer.toString('ascii', 0, 4) !== 'RIFF' ||
    buffer.toString('ascii', 8, 12) !== 'WAVE'
  ) {
    throw new Error('not a RIFF/WAVE file');
  }
  let offset = 12;
  let format: Omit<WavInfo, 'dataOffset' | 'dataBytes' | 'durationMs'> | undefined;
  while (offset + 8 <= buffer.length) {
    const id = buffer.toString('ascii', offset, offset + 4);
    const size = buffer.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      format = {
        channels: buffer.readUInt16LE(body + 2),
        sampleRate: buffer.readUInt32LE(body + 4),
        bitsPerSample: buffer.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!format) throw new Error('WAVE data before its format');
      // A streaming writer may leave the size unpatched (0 or 0xffffffff): trust the bytes present.
      const dataBytes = Math.min(size || Number.MAX_SAFE_INTEGER, buffer.length - body);
      const bytesPerSecond = format.sampleRate * format.channels * (format.bitsPerSample / 8);
      return {
        ...format,
        dataOffset: body,
        dataBytes,
        durationMs: Math.round((dataBytes / bytesPerSecond) * 1000),
      };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('WAVE file without data');
}

/** Root mean square of 16-bit PCM samples, 0-32768: 0 is silence. */
export function rms16(buffer: Buffer, info: WavInfo): number {
  let sum = 0;
  const samples = Math.floor(info.dataBytes / 2);
  for (let i = 0; i < samples; i++) {
    const value = buffer.readInt16LE(info.dataOffset + i * 2);
    sum += value * value;
  }
  return samples === 0 ? 0 : Math.sqrt(sum / samples);
}
