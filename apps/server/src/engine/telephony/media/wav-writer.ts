import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const HEADER_BYTES = 44;
const CHANNELS = 2;
const BYTES_PER_SAMPLE = 2;
/** RIFF sizes are 32-bit; stop short of the limit (about 37 hours of 8 kHz stereo). */
const MAX_DATA_BYTES = 0xffffffff - HEADER_BYTES;
const LITTLE_ENDIAN_HOST = os.endianness() === 'LE';

function header(sampleRate: number, dataBytes: number): Buffer {
  const buffer = Buffer.alloc(HEADER_BYTES);
  buffer.write('RIFF', 0, 'ascii');
  buffer.writeUInt32LE(36 + dataBytes, 4);
  buffer.write('WAVE', 8, 'ascii');
  buffer.write('fmt ', 12, 'ascii');
  buffer.writeUInt32LE(16, 16);
  buffer.writeUInt16LE(1, 20); // PCM
  buffer.writeUInt16LE(CHANNELS, 22);
  buffer.writeUInt32LE(sampleRate, 24);
  buffer.writeUInt32LE(sampleRate * CHANNELS * BYTES_PER_SAMPLE, 28);
  buffer.writeUInt16LE(CHANNELS * BYTES_PER_SAMPLE, 32);
  buffer.writeUInt16LE(BYTES_PER_SAMPLE * 8, 34);
  buffer.write('data', 36, 'ascii');
  buffer.writeUInt32LE(dataBytes, 40);
  return buffer;
}

export interface StereoWavWriterOptions {
  sampleRate?: number;
  /** Samples per channel in one frame (one 20 ms tick at 8 kHz is 160). */
  frameSamples?: number;
  /** Frames gathered before one write to disk: fewer system calls, little held in memory. */
  framesPerWrite?: number;
}

export interface WavWriterResult {
  path: string;
  durationMs: number;
  dataBytes: number;
}

/**
 * A stereo 16-bit PCM WAV written while the call runs: caller on the left, assistant on the
 * right, one frame of each per tick so the two stay aligned (a side with nothing that tick gets
 * silence). Only a fraction of a second is held in memory; the RIFF and data sizes are written
 * as 0 at first (readers treat that as "to the end of the file") and patched on close.
 */
export class StereoWavWriter {
  private readonly frameSamples: number;
  private readonly sampleRate: number;
  private readonly chunk: Int16Array;
  private readonly chunkFrames: number;
  private framesInChunk = 0;
  private dataBytes = 0;
  private failure: Error | null = null;
  private closing: Promise<WavWriterResult> | null = null;

  private constructor(
    readonly path: string,
    private readonly stream: WriteStream,
    options: StereoWavWriterOptions,
  ) {
    this.sampleRate = options.sampleRate ?? 8000;
    this.frameSamples = options.frameSamples ?? 160;
    this.chunkFrames = Math.max(1, options.framesPerWrite ?? 25);
    this.chunk = new Int16Array(this.frameSamples * CHANNELS * this.chunkFrames);
    stream.on('error', (err) => {
      this.failure ??= err;
    });
  }

  /** Creates the file (and its directory); rejects when it cannot be written. */
  static async open(file: string, options: StereoWavWriterOptions = {}): Promise<StereoWavWriter> {
    await mkdir(path.dirname(file), { recursive: true });
    const stream = createWriteStream(file, { flags: 'w' });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    stream.write(header(options.sampleRate ?? 8000, 0));
    return new StereoWavWriter(file, stream, options);
  }

  /** The first write error, after which nothing more is written. */
  get error(): Error | null {
    return this.failure;
  }

  get durationMs(): number {
    return (this.dataBytes / (this.sampleRate * CHANNELS * BYTES_PER_SAMPLE)) * 1000;
  }

  /** One tick: `left` and `right` hold `frameSamples` samples each, or null for silence. */
  writeFrame(left: Int16Array | null, right: Int16Array | null): void {
    if (this.closing || this.failure) return;
    const frameBytes = this.frameSamples * CHANNELS * BYTES_PER_SAMPLE;
    if (this.dataBytes + frameBytes > MAX_DATA_BYTES) return;
    const base = this.framesInChunk * this.frameSamples * CHANNELS;
    const chunk = this.chunk;
    for (let i = 0; i < this.frameSamples; i++) {
      chunk[base + 2 * i] = left ? (left[i] ?? 0) : 0;
      chunk[base + 2 * i + 1] = right ? (right[i] ?? 0) : 0;
    }
    this.dataBytes += frameBytes;
    if (++this.framesInChunk === this.chunkFrames) this.flush();
  }

  /** Writes what is gathered, patches the header and closes the file. */
  close(): Promise<WavWriterResult> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private flush(): void {
    if (this.framesInChunk === 0) return;
    const samples = this.framesInChunk * this.frameSamples * CHANNELS;
    // Copied: the chunk is reused for the next frames while this write is still queued.
    const bytes = Buffer.from(this.chunk.buffer, 0, samples * BYTES_PER_SAMPLE);
    const out = Buffer.allocUnsafe(bytes.length);
    bytes.copy(out);
    if (!LITTLE_ENDIAN_HOST) out.swap16();
    this.framesInChunk = 0;
    if (!this.failure) this.stream.write(out);
  }

  private async finish(): Promise<WavWriterResult> {
    this.flush();
    await new Promise<void>((resolve) => {
      if (this.stream.destroyed) return resolve();
      this.stream.end(() => resolve());
      this.stream.once('error', () => resolve());
    });
    if (this.failure) throw this.failure;
    const handle = await open(this.path, 'r+');
    try {
      await handle.write(header(this.sampleRate, this.dataBytes), 0, HEADER_BYTES, 0);
    } finally {
      await handle.close();
    }
    return { path: this.path, durationMs: Math.round(this.durationMs), dataBytes: this.dataBytes };
  }
}

/** Frames held while the file opens: a minute of the call (about 2 MB), then the recording is given up. */
const MAX_HELD_FRAMES = 3000;

/**
 * A recording whose file is still being opened, so that answering a call never waits for the
 * disk: under load, opening the file behind the other calls' writes took seconds, and the
 * caller would have waited that long for the 200 OK. Frames are held (copied: the session
 * reuses its buffers) until the file is open, then written in order; an open that fails is
 * reported when the recording is closed.
 */
export class OpeningWavWriter {
  private writer: StereoWavWriter | null = null;
  private failure: Error | null = null;
  private held: Array<[Int16Array | null, Int16Array | null]> = [];
  private readonly opened: Promise<void>;

  constructor(open: Promise<StereoWavWriter>) {
    this.opened = open.then(
      (writer) => {
        this.writer = writer;
        for (const [left, right] of this.held) writer.writeFrame(left, right);
        this.held = [];
      },
      (err: unknown) => {
        this.failure = new Error(
          `cannot write the recording: ${err instanceof Error ? err.message : String(err)}`,
        );
        this.held = [];
      },
    );
  }

  writeFrame(left: Int16Array | null, right: Int16Array | null): void {
    if (this.writer) {
      this.writer.writeFrame(left, right);
      return;
    }
    if (this.failure) return;
    if (this.held.length >= MAX_HELD_FRAMES) {
      this.failure = new Error('the recording file did not open within a minute');
      this.held = [];
      return;
    }
    this.held.push([left ? left.slice() : null, right ? right.slice() : null]);
  }

  async close(): Promise<WavWriterResult> {
    await this.opened;
    if (this.failure) {
      // Opened after giving up: the file would hold only the call's tail.
      await this.writer?.close().catch(() => undefined);
      throw this.failure;
    }
    return (this.writer as StereoWavWriter).close();
  }
}
