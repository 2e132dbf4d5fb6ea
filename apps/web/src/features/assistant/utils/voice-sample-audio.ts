/**
 * A voice sample as the browser holds it: mono float samples at their own rate, whether they came
 * from a WAV file or the microphone. The upload is always re-encoded as a 16-bit mono WAV at that
 * rate, so the server checks exactly the audio the browser checked.
 */

export interface DecodedSample {
  samples: Float32Array;
  sampleRate: number;
}

export class SampleDecodeError extends Error {
  override readonly name = 'SampleDecodeError';
}

const ascii = (view: DataView, at: number, length: number) =>
  String.fromCharCode(...Array.from({ length }, (_, i) => view.getUint8(at + i)));

/**
 * PCM (8/16/24/32-bit integer) and 32-bit float WAV files, mixed down to mono. Parsed here rather
 * than through Web Audio, whose decoder resamples to the audio context's rate and would hide a
 * file's real sample rate (an 8 kHz phone recording must be refused, not silently upsampled).
 */
export function parseWav(buffer: ArrayBuffer): DecodedSample {
  const view = new DataView(buffer);
  if (buffer.byteLength < 12 || ascii(view, 0, 4) !== 'RIFF' || ascii(view, 8, 4) !== 'WAVE') {
    throw new SampleDecodeError('不是有效的 WAV 文件，请上传 WAV 格式的录音');
  }
  let offset = 12;
  let format: { code: number; channels: number; sampleRate: number; bits: number } | undefined;
  while (offset + 8 <= buffer.byteLength) {
    const id = ascii(view, offset, 4);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      format = {
        code: view.getUint16(body, true),
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      };
      // WAVE_FORMAT_EXTENSIBLE carries the real format in its sub-format GUID.
      if (format.code === 0xfffe && size >= 26) format.code = view.getUint16(body + 24, true);
    } else if (id === 'data') {
      if (!format) break;
      const { code, channels, bits } = format;
      const bytes = bits / 8;
      const supported = (code === 1 && [8, 16, 24, 32].includes(bits)) || (code === 3 && bits === 32);
      if (!supported || channels < 1) {
        throw new SampleDecodeError('只支持 PCM 编码的 WAV 录音，请用录音软件另存为 16 位 WAV');
      }
      const length = Math.min(size || Number.MAX_SAFE_INTEGER, buffer.byteLength - body);
      const frames = Math.floor(length / (bytes * channels));
      const samples = new Float32Array(frames);
      const read = (at: number): number => {
        if (code === 3) return view.getFloat32(at, true);
        if (bits === 8) return (view.getUint8(at) - 128) / 128;
        if (bits === 16) return view.getInt16(at, true) / 32768;
        if (bits === 24) {
          const value = view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getInt8(at + 2) << 16);
          return value / 8388608;
        }
        return view.getInt32(at, true) / 2147483648;
      };
      for (let frame = 0; frame < frames; frame++) {
        let sum = 0;
        for (let channel = 0; channel < channels; channel++)
          sum += read(body + (frame * channels + channel) * bytes);
        samples[frame] = sum / channels;
      }
      return { samples, sampleRate: format.sampleRate };
    }
    offset = body + size + (size % 2);
  }
  throw new SampleDecodeError('WAV 文件中没有音频数据');
}

/** A 16-bit mono PCM WAV of the samples. */
export function encodeWav({ samples, sampleRate }: DecodedSample): Blob {
  const buffer = new ArrayBuffer(44 + samples.length * 2);
  const view = new DataView(buffer);
  const write = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) view.setUint8(at + i, text.charCodeAt(i));
  };
  write(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  write(8, 'WAVE');
  write(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  write(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const value = Math.max(-1, Math.min(1, samples[i] as number));
    view.setInt16(44 + i * 2, Math.round(value < 0 ? value * 32768 : value * 32767), true);
  }
  return new Blob([buffer], { type: 'audio/wav' });
}

/**
 * The samples of a WAV file (parsed as is) or of a microphone recording (webm/ogg from
 * MediaRecorder, decoded by Web Audio at the audio context's rate, which is the rate the
 * microphone was captured at on every current browser).
 */
export async function decodeVoiceSample(blob: Blob): Promise<DecodedSample> {
  const buffer = await blob.arrayBuffer();
  const head = new Uint8Array(buffer.slice(0, 4));
  if (String.fromCharCode(...head) === 'RIFF') return parseWav(buffer);
  const context = new AudioContext();
  try {
    const audio = await context.decodeAudioData(buffer).catch(() => {
      throw new SampleDecodeError('无法解码这段录音，请重新录制或上传 WAV 文件');
    });
    const samples = new Float32Array(audio.length);
    for (let channel = 0; channel < audio.numberOfChannels; channel++) {
      const data = audio.getChannelData(channel);
      for (let i = 0; i < data.length; i++)
        samples[i] = (samples[i] as number) + (data[i] as number) / audio.numberOfChannels;
    }
    return { samples, sampleRate: audio.sampleRate };
  } finally {
    void context.close();
  }
}
