import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEspeakSynthesizer } from './espeak';
import { wavToPcm } from './resample';
import { type EndpointEvent, type EndpointerOptions, FRAME_SAMPLES, loadVad, type SpeechEnd } from './vad';

/**
 * Real speech: Mandarin sentences from the project's own offline synthesiser, resampled to the
 * 8 kHz a SIP leg receives, laid out like a caller's turn and buried in seeded line noise.
 */

const synthesizer = createEspeakSynthesizer();
const speech: Record<'question' | 'answer' | 'short', Int16Array> = {
  question: new Int16Array(0),
  answer: new Int16Array(0),
  short: new Int16Array(0),
};

beforeAll(async () => {
  const voice = { voiceId: 'cmn+m3', speed: 1, volume: 80 };
  const say = async (text: string) => wavToPcm((await synthesizer.synthesize(text, voice)).audio);
  speech.question = await say('您好，请问明天上午方便安装宽带吗？');
  speech.answer = await say('好的，那就明天上午十点吧。');
  speech.short = await say('是的');
});
afterAll(() => synthesizer.close());

const dbfs = (samples: ArrayLike<number>) => {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return 10 * Math.log10(sum / samples.length / 32768 ** 2 + 1e-12);
};

/** Where a clip is audible on the line: the first and last 10 ms at least 10 dB above the noise. */
function audibleSpan(clip: Float64Array, noiseDbfs: number): [number, number] {
  let first = -1;
  let last = -1;
  for (let at = 0; at + 80 <= clip.length; at += 80) {
    if (dbfs(clip.subarray(at, at + 80)) > noiseDbfs + 10) {
      if (first < 0) first = at;
      last = at + 80;
    }
  }
  return [first / 8, last / 8];
}

function random(seed: number) {
  let state = seed;
  const uniform = () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return (state + 0.5) / 2 ** 32;
  };
  return {
    uniform,
    gaussian: () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()),
  };
}

const clamp16 = (value: number) => Math.max(-32768, Math.min(32767, Math.round(value)));

interface Call {
  samples: Int16Array;
  /** Where each clip's speech really is, in ms from the start of the call. */
  spans: [number, number][];
}

/** Silences (ms) and clips in order, with white noise at `noiseDbfs` under everything. */
function call(parts: (number | Int16Array)[], noiseDbfs: number, seed = 1, speechGainDb = 0): Call {
  const length = parts.reduce<number>(
    (sum, part) => sum + (typeof part === 'number' ? part * 8 : part.length),
    0,
  );
  const samples = new Float64Array(Math.ceil(length / FRAME_SAMPLES) * FRAME_SAMPLES);
  const spans: [number, number][] = [];
  const gain = 10 ** (speechGainDb / 20);
  let at = 0;
  for (const part of parts) {
    if (typeof part === 'number') {
      at += part * 8;
      continue;
    }
    for (let i = 0; i < part.length; i++) samples[at + i] = part[i]! * gain;
    const [start, end] = audibleSpan(samples.subarray(at, at + part.length), noiseDbfs);
    spans.push([at / 8 + start, at / 8 + end]);
    at += part.length;
  }
  const noise = random(seed);
  const amplitude = 32768 * 10 ** (noiseDbfs / 20);
  const out = new Int16Array(samples.length);
  for (let i = 0; i < out.length; i++) out[i] = clamp16(samples[i]! + amplitude * noise.gaussian());
  return { samples: out, spans };
}

/** G.711 μ-law encode then decode (segmented, as the codec on the wire does). */
function throughMuLaw(sample: number): number {
  const bias = 0x84;
  const magnitude = Math.min(Math.abs(sample), 32635) + bias;
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  const decoded = (((mantissa << 3) + bias) << exponent) - bias;
  return sample < 0 ? -decoded : decoded;
}

/** G.711 A-law encode then decode, on the 13-bit magnitude A-law works with. */
function throughALaw(sample: number): number {
  const magnitude = Math.min(Math.abs(sample), 32767) >> 3;
  let decoded: number;
  if (magnitude < 32) decoded = ((magnitude >> 1) << 1) + 1;
  else {
    const segment = Math.floor(Math.log2(magnitude)) - 4;
    const mantissa = (magnitude >> segment) & 0x0f;
    decoded = ((mantissa | 0x10) << segment) + (1 << (segment - 1));
  }
  return sample < 0 ? -(decoded << 3) : decoded << 3;
}

const quantised = (samples: Int16Array, codec: (sample: number) => number) => samples.map(codec);

async function endpoint(samples: Int16Array, options?: EndpointerOptions) {
  const vad = await loadVad();
  const endpointer = vad.createEndpointer(options);
  const events: EndpointEvent[] = [];
  for (let at = 0; at < samples.length; at += FRAME_SAMPLES) {
    const event = endpointer.push(samples.subarray(at, at + FRAME_SAMPLES));
    if (event) events.push(event);
  }
  endpointer.close();
  return events;
}

const ends = (events: EndpointEvent[]) =>
  events.filter((event): event is SpeechEnd => event.type === 'speech_end');

/** The handed-over utterance is the caller's audio itself, from its start to its end. */
function expectUtteranceFrom(samples: Int16Array, utterance: SpeechEnd) {
  const from = utterance.audioStartMs * 8;
  const mismatch = utterance.audio.findIndex((value, i) => value !== samples[from + i]);
  expect(mismatch).toBe(-1);
}

describe('endpointing a caller with WebRTC VAD', () => {
  it.each([
    ['a clear line', 0, -50, null],
    ['a quiet caller on a μ-law line', -12, -55, throughMuLaw],
    ['an A-law line', 0, -50, throughALaw],
  ] as const)(
    'finds both sentences of a turn on %s, within 100 ms of the speech',
    async (_, gain, noise, codec) => {
      const turn = call([1500, speech.question, 1000, speech.answer, 2000], noise, 7, gain);
      const samples = codec ? quantised(turn.samples, codec) : turn.samples;
      const events = await endpoint(samples);

      expect(events.map((event) => event.type)).toEqual([
        'speech_start',
        'speech_end',
        'speech_start',
        'speech_end',
      ]);
      for (const [n, [start, end]] of turn.spans.entries()) {
        const began = events[2 * n]!;
        const ended = events[2 * n + 1] as SpeechEnd;
        expect(Math.abs(began.startMs - start), `start of sentence ${n + 1}`).toBeLessThanOrEqual(100);
        expect(Math.abs(ended.endMs - end), `end of sentence ${n + 1}`).toBeLessThanOrEqual(100);
        // Barge-in is decided within a fifth of a second of the caller's first syllable.
        expect(began.atMs - start).toBeLessThanOrEqual(200);
        // The turn is handed over after the configured 700 ms of silence, not seconds later.
        expect(ended.atMs - end).toBeGreaterThanOrEqual(550);
        expect(ended.atMs - end).toBeLessThanOrEqual(850);
        expect(ended.reason).toBe('silence');

        // What recognition gets: the whole sentence, with ~200 ms before and after it.
        expectUtteranceFrom(samples, ended);
        const audioEnd = ended.audioStartMs + ended.audio.length / 8;
        expect(ended.audioStartMs).toBeLessThanOrEqual(start - 100);
        expect(audioEnd).toBeGreaterThanOrEqual(end + 100);
        expect(Math.abs(ended.audio.length / 8 - (end - start + 400))).toBeLessThanOrEqual(200);
      }
    },
  );

  it.each([
    ['white noise at -60 dBFS', 'white', -60],
    ['white noise at -50 dBFS', 'white', -50],
    ['white noise at -45 dBFS', 'white', -45],
    ['rumble at -45 dBFS', 'brown', -45],
    ['50 Hz mains hum at -40 dBFS', 'hum', -40],
  ] as const)('hears no speech in 20 s of %s', async (_, kind, level) => {
    const noise = random(3);
    const amplitude = 32768 * 10 ** (level / 20);
    const samples = new Int16Array(20 * 8000);
    let brown = 0;
    for (let i = 0; i < samples.length; i++) {
      if (kind === 'white') samples[i] = clamp16(amplitude * noise.gaussian());
      else if (kind === 'brown') {
        // Leaky integration of white noise; 1/5.03 brings its RMS back to `amplitude`.
        brown = 0.98 * brown + noise.gaussian();
        samples[i] = clamp16((amplitude * brown) / 5.03);
      } else samples[i] = clamp16(amplitude * Math.SQRT2 * Math.sin((2 * Math.PI * 50 * i) / 8000));
    }
    expect(await endpoint(samples)).toEqual([]);
  });

  it.each([
    ['a near-silent line (±1 LSB)', -99, -50, 0],
    ['a quiet line (-70 dBFS)', -70, -50, 0],
    ['a caller walking into the street (-60 to -45 dBFS)', -60, -45, 2],
    ['a line 20 dB noisier', -60, -40, 2],
  ] as const)('settles within 2 s after %s gets noisy', async (_, before, after, mostEvents) => {
    const noise = random(12);
    const samples = new Int16Array(12 * 8000);
    for (let i = 0; i < samples.length; i++) {
      const level = i < 2 * 8000 ? before : after;
      samples[i] =
        before < -90 && i < 2 * 8000
          ? (i % 2) * 2 - 1
          : clamp16(32768 * 10 ** (level / 20) * noise.gaussian());
    }
    const events = await endpoint(samples);
    // From near silence nothing barges in; a big step may start one false utterance, which ends
    // by 2 s after the step, not the 3-5 s libfvad alone needs.
    expect(events.length).toBeLessThanOrEqual(mostEvents);
    if (events.length > 0) expect(events.map((event) => event.type)).toEqual(['speech_start', 'speech_end']);
    for (const event of events) expect(event.atMs).toBeLessThanOrEqual(2000 + 2000);
  });

  it('does not barge in on clicks, but does on a two-syllable answer', async () => {
    const line = call([10_000], -55, 5);
    const noise = random(9);
    // A click each second: a 5 ms crackle, then a louder 20 ms pop, alternating.
    for (let second = 1; second < 10; second++) {
      const length = second % 2 ? 40 : 160;
      const at = second * 8000 + 37;
      for (let i = 0; i < length; i++) {
        const burst = 20_000 * Math.exp(-i / (length / 4)) * (noise.uniform() * 2 - 1);
        line.samples[at + i] = clamp16(line.samples[at + i]! + burst);
      }
    }
    expect(await endpoint(line.samples)).toEqual([]);

    const answer = call([1000, speech.short, 1500], -55, 5);
    const events = await endpoint(answer.samples);
    expect(events.map((event) => event.type)).toEqual(['speech_start', 'speech_end']);
    expect(Math.abs(events[0]!.startMs - answer.spans[0]![0])).toBeLessThanOrEqual(100);
  });

  it('keeps a turn whole when the pause is shorter than the configured silence', async () => {
    const turn = call([1000, speech.question, 1000, speech.answer, 2500], -50, 4);
    const events = ends(await endpoint(turn.samples, { silenceMs: 1500 }));
    expect(events).toHaveLength(1);
    expect(Math.abs(events[0]!.startMs - turn.spans[0]![0])).toBeLessThanOrEqual(100);
    expect(Math.abs(events[0]!.endMs - turn.spans[1]![1])).toBeLessThanOrEqual(100);
    expect(events[0]!.atMs - events[0]!.endMs).toBeGreaterThanOrEqual(1400);
  });

  it('cuts an utterance that runs past the maximum and goes on with the next one', async () => {
    const monologue = call([600, speech.question, speech.answer, speech.question, 1500], -50, 6);
    const events = await endpoint(monologue.samples, { maxUtteranceMs: 3000 });
    const utterances = ends(events);
    expect(events.map((event) => event.type)).toEqual(
      utterances.flatMap(() => ['speech_start', 'speech_end']),
    );
    expect(utterances.length).toBeGreaterThanOrEqual(4);
    expect(utterances[0]!.reason).toBe('max_length');
    expect(utterances[0]!.endMs - utterances[0]!.startMs).toBe(3000);
    // 200 ms of pre-roll and 3 s of speech, never more.
    for (const utterance of utterances) expect(utterance.audio.length).toBeLessThanOrEqual(3200 * 8);
    expect(utterances[0]!.audio.length).toBe(3200 * 8);
    // Nothing the caller said is lost between the pieces.
    const covered = utterances.reduce((sum, utterance) => sum + utterance.endMs - utterance.startMs, 0);
    const spoken = monologue.spans.at(-1)![1] - monologue.spans[0]![0];
    expect(covered).toBeGreaterThanOrEqual(spoken - 600);
    for (const utterance of utterances) expectUtteranceFrom(monologue.samples, utterance);
  });

  it('hands over the words so far when the call ends mid-sentence, and refuses misuse', async () => {
    const turn = call([1000, speech.question], -50, 8);
    const vad = await loadVad();
    const endpointer = vad.createEndpointer();
    const halfway = Math.floor(turn.samples.length / FRAME_SAMPLES / 1.5) * FRAME_SAMPLES;
    for (let at = 0; at < halfway; at += FRAME_SAMPLES)
      endpointer.push(turn.samples.subarray(at, at + FRAME_SAMPLES));
    expect(endpointer.inSpeech).toBe(true);
    const cut = endpointer.flush();
    expect(cut).toMatchObject({ type: 'speech_end', reason: 'flush' });
    expect(cut!.endMs).toBeLessThanOrEqual(endpointer.positionMs);
    expect(cut!.audio.length / 8).toBeGreaterThan(halfway / 8 - 1000 - 200);
    expect(endpointer.flush()).toBeNull();

    expect(() => endpointer.push(new Int16Array(80))).toThrow(/160 samples/);
    endpointer.close();
    expect(() => endpointer.push(new Int16Array(FRAME_SAMPLES))).toThrow(/closed/);
    expect(() => vad.createEndpointer({ mode: 4 as never })).toThrow(RangeError);
    expect(() => vad.createEndpointer({ silenceMs: 0 })).toThrow(RangeError);
  });

  it('frees each call’s detector: 25,000 calls opened and closed leave the WASM heap as it was', async () => {
    const vad = await loadVad();
    vad.createEndpointer().close();
    const before = vad.heapBytes;
    for (let i = 0; i < 25_000; i++) vad.createEndpointer().close();
    expect(vad.heapBytes).toBe(before);
  });

  it('loads and gives the same decisions in a worker thread, where the media loop runs', async () => {
    const turn = call([800, speech.question, 900, speech.answer, 1000], -50, 2);
    const inMain = (await endpoint(turn.samples)).map(({ type, startMs, atMs }) => ({ type, startMs, atMs }));
    const require = createRequire(import.meta.url);
    // The worker has no vitest transform: tsx compiles vad.ts there.
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.tsx).then(({ register }) => {
        register();
        return import(workerData.vad);
      }).then(async ({ loadVad, FRAME_SAMPLES }) => {
        const endpointer = (await loadVad()).createEndpointer();
        const samples = new Int16Array(workerData.samples);
        const events = [];
        for (let at = 0; at < samples.length; at += FRAME_SAMPLES) {
          const event = endpointer.push(samples.subarray(at, at + FRAME_SAMPLES));
          if (event) events.push({ type: event.type, startMs: event.startMs, atMs: event.atMs });
        }
        parentPort.postMessage(events);
      }).catch((err) => parentPort.postMessage({ error: String(err && err.stack || err) }));
    `;
    const worker = new Worker(source, {
      eval: true,
      workerData: {
        tsx: pathToFileURL(require.resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href,
        vad: new URL('./vad.ts', import.meta.url).href,
        samples: turn.samples.buffer,
      },
    });
    try {
      const inWorker = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(inWorker).toEqual(inMain);
    } finally {
      await worker.terminate();
    }
  });
});
