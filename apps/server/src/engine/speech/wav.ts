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

/** A mono 16-bit PCM WAV file around `samples`. */
export function encodeWav(samples: Int16Array, sampleRate: number): Buffer {
  const dataBytes = samples.length * 2;
  const buffer = Buffer.alloc(44 + dataBytes);
  buffer.write('RIFF', 0, 'ascii');
  buffer.writeUInt32LE(36 + dataBytes, 4);
  buffer.write('WAVE', 8, 'ascii');
  buffer.write('fmt ', 12, 'ascii');
  buffer.writeUInt32LE(16, 16);
  buffer.writeUInt16LE(1, 20); // PCM
  buffer.writeUInt16LE(1, 22); // mono
  buffer.writeUInt32LE(sampleRate, 24);
  buffer.writeUInt32LE(sampleRate * 2, 28);
  buffer.writeUInt16LE(2, 32);
  buffer.writeUInt16LE(16, 34);
  buffer.write('data', 36, 'ascii');
  buffer.writeUInt32LE(dataBytes, 40);
  Buffer.from(samples.buffer, samples.byteOffset, dataBytes).copy(buffer, 44);
  return buffer;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The samples of a 16-bit WAV mixed down to mono, at the file's own rate. */
export function readMono(wav: Buffer): { samples: Int16Array; sampleRate: number } {
  const info = readWav(wav);
  if (info.bitsPerSample !== 16) throw new Error(`unsupported WAV: ${info.bitsPerSample}-bit samples`);
  const { channels } = info;
  const frames = Math.floor(info.dataBytes / (2 * channels));
  // One copy of the data into an aligned array (a Buffer may start at an odd offset), then typed
  // reads: a readInt16LE per sample made recording mixes a third of a busy server's CPU.
  const interleaved = new Int16Array(frames * channels);
  if (LITTLE_ENDIAN) {
    new Uint8Array(interleaved.buffer).set(
      wav.subarray(info.dataOffset, info.dataOffset + interleaved.byteLength),
    );
  } else {
    for (let i = 0; i < interleaved.length; i++) interleaved[i] = wav.readInt16LE(info.dataOffset + i * 2);
  }
  if (channels === 1) return { samples: interleaved, sampleRate: info.sampleRate };
  const samples = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let ch = 0; ch < channels; ch++) sum += interleaved[i * channels + ch] as number;
    samples[i] = Math.round(sum / channels);
  }
  return { samples, sampleRate: info.sampleRate };
}
