import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readWav } from '../../speech/wav';
import { OpeningWavWriter, StereoWavWriter } from './wav-writer';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wav-writer-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const tone = (frequency: number, amplitude: number, samples = 160, offset = 0) =>
  Int16Array.from({ length: samples }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * frequency * (i + offset)) / 8000)),
  );

function channel(buffer: Buffer, dataOffset: number, frames: number, side: 0 | 1): Int16Array {
  return Int16Array.from({ length: frames }, (_, i) => buffer.readInt16LE(dataOffset + (i * 2 + side) * 2));
}

const rms = (samples: Int16Array) => Math.sqrt(samples.reduce((sum, s) => sum + s * s, 0) / samples.length);

describe('StereoWavWriter', () => {
  it('writes a 8 kHz stereo 16-bit file with the sizes patched on close', async () => {
    const file = path.join(dir, 'project-1', 'call-1.wav');
    const writer = await StereoWavWriter.open(file);
    for (let tick = 0; tick < 50; tick++) writer.writeFrame(tone(1000, 8000, 160, tick * 160), null);
    const result = await writer.close();

    const bytes = fs.readFileSync(file);
    expect(result).toEqual({ path: file, durationMs: 1000, dataBytes: 32000 });
    expect(bytes.length).toBe(44 + 32000);
    expect(bytes.readUInt32LE(4)).toBe(36 + 32000);
    expect(bytes.readUInt32LE(40)).toBe(32000);
    expect(readWav(bytes)).toEqual({
      sampleRate: 8000,
      channels: 2,
      bitsPerSample: 16,
      dataOffset: 44,
      dataBytes: 32000,
      durationMs: 1000,
    });
    expect(bytes.readUInt32LE(28)).toBe(32000);
    expect(bytes.readUInt16LE(32)).toBe(4);
  });

  it('keeps the caller on the left and the assistant on the right, silence where a side had nothing', async () => {
    const file = path.join(dir, 'sides.wav');
    const writer = await StereoWavWriter.open(file, { framesPerWrite: 4 });
    for (let tick = 0; tick < 10; tick++) {
      writer.writeFrame(tick < 5 ? tone(440, 10000) : null, tick >= 5 ? tone(1000, 6000) : null);
    }
    await writer.close();
    const bytes = fs.readFileSync(file);
    const left = channel(bytes, 44, 1600, 0);
    const right = channel(bytes, 44, 1600, 1);
    expect(rms(left.subarray(0, 800))).toBeGreaterThan(6000);
    expect(rms(left.subarray(800))).toBe(0);
    expect(rms(right.subarray(0, 800))).toBe(0);
    expect(rms(right.subarray(800))).toBeGreaterThan(3500);
  });

  it('streams to disk while the call runs instead of holding the call in memory', async () => {
    const file = path.join(dir, 'stream.wav');
    const writer = await StereoWavWriter.open(file, { framesPerWrite: 25 });
    for (let tick = 0; tick < 100; tick++) writer.writeFrame(tone(440, 1000), tone(440, 1000));
    const deadline = Date.now() + 2000;
    while (fs.statSync(file).size < 44 + 3 * 16000 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(fs.statSync(file).size).toBeGreaterThanOrEqual(44 + 3 * 16000);
    // Before close the header says "unknown length", which readers take as the rest of the file.
    expect(readWav(fs.readFileSync(file)).durationMs).toBeGreaterThanOrEqual(1500);
    await writer.close();
    expect(readWav(fs.readFileSync(file)).durationMs).toBe(2000);
  });

  it('refuses a path it cannot write', async () => {
    await expect(StereoWavWriter.open(dir)).rejects.toThrow();
  });

  it('closes an empty recording as a valid zero-length file', async () => {
    const file = path.join(dir, 'empty.wav');
    const writer = await StereoWavWriter.open(file);
    expect((await writer.close()).durationMs).toBe(0);
    expect(readWav(fs.readFileSync(file))).toMatchObject({ channels: 2, dataBytes: 0 });
  });
});

describe('OpeningWavWriter', () => {
  it('keeps what was said before the file opened, in order, and the frames after it', async () => {
    const file = path.join(dir, 'late-open.wav');
    let open!: (writer: Promise<StereoWavWriter>) => void;
    const recorder = new OpeningWavWriter(new Promise((resolve) => (open = resolve)));
    // The session reuses one buffer for every frame it hands over.
    const frame = new Int16Array(160);
    for (let tick = 0; tick < 10; tick++) {
      frame.set(tone(440, 10000, 160, tick * 160));
      recorder.writeFrame(null, frame);
    }
    open(StereoWavWriter.open(file));
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (let tick = 0; tick < 10; tick++) {
      frame.set(tone(1000, 6000, 160, tick * 160));
      recorder.writeFrame(null, frame);
    }
    expect((await recorder.close()).durationMs).toBe(400);
    const right = channel(fs.readFileSync(file), 44, 3200, 1);
    expect(right.subarray(0, 1600)).toEqual(tone(440, 10000, 1600));
    expect(right.subarray(1600)).toEqual(tone(1000, 6000, 1600));
  });

  it('reports a file it could not open when the recording is closed', async () => {
    const recorder = new OpeningWavWriter(StereoWavWriter.open(dir));
    recorder.writeFrame(tone(440, 1000), null);
    await expect(recorder.close()).rejects.toThrow(/cannot write the recording/);
  });
});
