import { describe, expect, it } from 'vitest';
import { wavHeader } from './testing/openai-speech-server';
import { encodeWav, readMono } from './wav';

/** A 16-bit WAV with `channels` interleaved, written without the code under test. */
function wavOf(frames: number[][], sampleRate: number): Buffer {
  const channels = frames[0]!.length;
  const data = Buffer.alloc(frames.length * channels * 2);
  frames.flat().forEach((v, i) => {
    data.writeInt16LE(v, i * 2);
  });
  const head = wavHeader(sampleRate, channels, data.length);
  return Buffer.concat([head, data]);
}

describe('readMono', () => {
  it('reads mono samples exactly, from a buffer that starts at an odd offset', () => {
    const values = [0, 1, -1, 32767, -32768, 1234, -4321];
    const wav = wavOf(
      values.map((v) => [v]),
      22_050,
    );
    // A Buffer sliced from a larger one can start anywhere in its memory.
    const odd = Buffer.concat([Buffer.from([7]), wav]).subarray(1);
    expect(odd.byteOffset % 2).toBe(1);
    const { samples, sampleRate } = readMono(odd);
    expect(sampleRate).toBe(22_050);
    expect([...samples]).toEqual(values);
    // Its own memory: changing it leaves the file alone.
    samples[0] = 99;
    expect(odd.readInt16LE(44)).toBe(0);
  });

  it('averages stereo channels, rounding as before', () => {
    const { samples } = readMono(
      wavOf(
        [
          [100, 300],
          [-3, 0],
          [32767, 32767],
          [-32768, 32767],
        ],
        8000,
      ),
    );
    expect([...samples]).toEqual([200, Math.round(-1.5), 32767, 0]);
  });

  it('reads back what encodeWav wrote', () => {
    const pcm = Int16Array.from({ length: 1000 }, (_, i) => Math.round(Math.sin(i / 7) * 20000));
    expect([...readMono(encodeWav(pcm, 16_000)).samples]).toEqual([...pcm]);
  });
});
