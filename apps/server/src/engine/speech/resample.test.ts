import { describe, expect, it } from 'vitest';
import { Resampler, resample, resampledLength, wavToPcm } from './resample';

const tone = (rate: number, hz: number, seconds: number, amplitude = 10_000) => {
  const samples = new Int16Array(Math.round(rate * seconds));
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
  }
  return samples;
};

/** RMS away from both ends, where the filter reads zeros past the signal. */
const rms = (samples: Int16Array, skip = 200) => {
  let sum = 0;
  for (let i = skip; i < samples.length - skip; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / (samples.length - 2 * skip));
};
const db = (ratio: number) => 20 * Math.log10(ratio);

/** Frequency from rising zero crossings over the whole signal. */
const frequency = (samples: Int16Array, rate: number) => {
  const crossings: number[] = [];
  for (let i = 1; i < samples.length; i++) if (samples[i - 1]! < 0 && samples[i]! >= 0) crossings.push(i);
  return ((crossings.length - 1) * rate) / (crossings.at(-1)! - crossings[0]!);
};

const wav = (samples: Int16Array, rate: number) => {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + samples.length * 2, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(samples.length * 2, 40);
  return Buffer.concat([header, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)]);
};

describe('resampling synthesised speech to the telephone rate', () => {
  it.each([22_050, 16_000, 24_000, 44_100])(
    'keeps a 1 kHz tone at %i Hz its level and pitch, and a 3.4 kHz tone its level, at 8 kHz',
    (rate) => {
      const input = tone(rate, 1000, 1);
      const output = resample(input, rate, 8000);
      expect(output.length).toBe(8000);
      expect(Math.abs(db(rms(output) / rms(input)))).toBeLessThan(1);
      expect(frequency(output, 8000)).toBeCloseTo(1000, 0);
      // The top of the telephone band is still flat: intelligibility lives in 2-3.4 kHz.
      const edge = tone(rate, 3400, 1);
      expect(Math.abs(db(rms(resample(edge, rate, 8000)) / rms(edge)))).toBeLessThan(1);
    },
  );

  it('removes a 6 kHz tone from 22.05 kHz speech by at least 40 dB instead of folding it to 2 kHz', () => {
    const input = tone(22_050, 6000, 1);
    expect(db(rms(resample(input, 22_050, 8000)) / rms(input))).toBeLessThan(-40);
  });

  it.each([22_050, 16_000, 24_000, 44_100])(
    'removes every tone from 4.4 kHz up to the Nyquist of %i Hz by at least 40 dB',
    (rate) => {
      const leaks: string[] = [];
      for (let hz = 4400; hz < rate / 2 - 100; hz += 300) {
        const input = tone(rate, hz, 0.25);
        const attenuation = db(rms(resample(input, rate, 8000), 100) / rms(input, 100));
        if (attenuation > -40) leaks.push(`${hz} Hz: ${attenuation.toFixed(1)} dB`);
      }
      expect(leaks).toEqual([]);
    },
  );

  it('doubles 8 kHz to 16 kHz for recognisers, with the 1 kHz tone intact and no 7 kHz image', () => {
    const input = tone(8000, 1000, 1);
    const output = resample(input, 8000, 16_000);
    expect(output.length).toBe(16_000);
    expect(Math.abs(db(rms(output) / rms(input)))).toBeLessThan(1);
    expect(frequency(output, 16_000)).toBeCloseTo(1000, 0);
    // What is left after removing the 1 kHz tone is the image the interpolation filter let through.
    let residual = 0;
    for (let i = 400; i < output.length - 400; i++) {
      const clean = 10_000 * Math.sin((2 * Math.PI * 1000 * i) / 16_000);
      residual += (output[i]! - clean) ** 2;
    }
    expect(db(Math.sqrt(residual / (output.length - 800)) / rms(input))).toBeLessThan(-40);
  });

  it('produces exactly ceil(n × to / from) samples for any length', () => {
    for (const [from, to] of [
      [22_050, 8000],
      [44_100, 8000],
      [16_000, 8000],
      [8000, 16_000],
    ] as const) {
      for (const n of [0, 1, 2, 3, 441, 1000, 22_051, 12_345]) {
        const expected = Math.ceil((n * to) / from);
        expect(resampledLength(n, from, to), `${from}->${to} n=${n}`).toBe(expected);
        expect(resample(new Int16Array(n), from, to).length, `${from}->${to} n=${n}`).toBe(expected);
      }
    }
  });

  it('gives the same samples streamed in uneven chunks as in one go', () => {
    let seed = 11;
    const random = () => {
      seed = (seed * 1_664_525 + 1_013_904_223) >>> 0;
      return seed / 2 ** 32;
    };
    const input = new Int16Array(22_050 * 2);
    for (let i = 0; i < input.length; i++) input[i] = Math.round((random() - 0.5) * 20_000);
    for (const [from, to] of [
      [22_050, 8000],
      [8000, 16_000],
    ] as const) {
      const whole = resample(input, from, to);
      const streaming = new Resampler(from, to);
      const parts: Int16Array[] = [];
      for (let at = 0; at < input.length; ) {
        const size = Math.min(input.length - at, 1 + Math.floor(random() * 900));
        parts.push(streaming.push(input.subarray(at, at + size)));
        at += size;
      }
      parts.push(streaming.flush());
      const joined = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
      let offset = 0;
      for (const part of parts) {
        joined.set(part, offset);
        offset += part.length;
      }
      expect(joined.length).toBe(whole.length);
      // Compared sample by sample in a loop: deep equality on typed arrays is slow at this size.
      expect(joined.findIndex((value, i) => value !== whole[i])).toBe(-1);
    }
  });

  it('reads a WAV, mixes stereo to mono and resamples it', () => {
    const left = tone(22_050, 1000, 0.5);
    const interleaved = new Int16Array(left.length * 2);
    for (let i = 0; i < left.length; i++) interleaved[2 * i] = left[i]!;
    const stereo = wav(interleaved, 22_050);
    stereo.writeUInt16LE(2, 22);
    stereo.writeUInt32LE(22_050 * 4, 28);
    stereo.writeUInt16LE(4, 32);
    const mono = wavToPcm(stereo);
    expect(mono.length).toBe(4000);
    // The silent right channel halves the level: -6 dB.
    expect(db(rms(mono) / rms(left))).toBeCloseTo(-6, 0);
    expect(wavToPcm(wav(tone(16_000, 500, 1), 16_000), 16_000).length).toBe(16_000);
  });
});
