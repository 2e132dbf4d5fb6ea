/**
 * Test support: a synthetic reading voice, so sample checks and cloning flows are tested on audio
 * with the properties that matter (a pitch that moves like Mandarin tones around a speaker's own
 * centre, syllables and pauses, a level) without shipping recordings. Not exported from the
 * package index: tests import it as `@callpilot/contracts/voice-sample-testing`.
 */

export interface SyntheticVoice {
  /** The speaker's centre F0 in Hz: about 120 for a man, 210 for a woman. */
  f0: number;
  /** How far the tones swing around the centre, in semitones (default 4, a lively reader). */
  toneRange?: number;
}

export interface SyntheticReadingOptions {
  seconds: number;
  sampleRate: number;
  /** Speakers taking turns phrase by phrase (one entry: a single reader). */
  voices: SyntheticVoice[];
  /** Peak amplitude of the voice, 0-1 (default 0.3). */
  amplitude?: number;
  /** Syllable length in ms (default 230) and the gap after each (default 40). */
  syllableMs?: number;
  gapMs?: number;
  /** A pause after every this many syllables (default 7), this long (default 250 ms). */
  phraseSyllables?: number;
  pauseMs?: number;
  /** Deterministic noise and tone choice. */
  seed?: number;
}

/** Mandarin's four tones as pitch shapes over a syllable, in units of the tone range. */
const TONES: ((t: number) => number)[] = [
  () => 0.6,
  (t) => -0.3 + 0.9 * t,
  (t) => -0.3 - 0.7 * Math.sin(Math.PI * t),
  (t) => 1 - 1.8 * t,
];

function random(seed: number) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

/** Float32 samples in [-1, 1] of someone (or several people in turn) reading aloud. */
export function syntheticReading(options: SyntheticReadingOptions): Float32Array {
  const {
    seconds,
    sampleRate,
    voices,
    amplitude = 0.3,
    syllableMs = 230,
    gapMs = 40,
    phraseSyllables = 7,
    pauseMs = 250,
    seed = 7,
  } = options;
  const next = random(seed);
  const out = new Float32Array(Math.round(seconds * sampleRate));
  const syllable = Math.round((syllableMs / 1000) * sampleRate);
  const gap = Math.round((gapMs / 1000) * sampleRate);
  const pause = Math.round((pauseMs / 1000) * sampleRate);
  // Voiced sound: harmonics of F0 with a falling spectrum, up to a telephone-like 3.4 kHz.
  const maxHarmonicHz = Math.min(3400, sampleRate / 2 - 100);
  let at = 0;
  let count = 0;
  let phase = 0;
  while (at < out.length) {
    const voice = voices[Math.floor(count / phraseSyllables) % voices.length] as SyntheticVoice;
    const tone = TONES[Math.floor(next() * TONES.length)] as (t: number) => number;
    const range = voice.toneRange ?? 4;
    // Pitch drifts down over a phrase (declination) and no two syllables sit exactly alike.
    const declination = 1.5 - (3 * (count % phraseSyllables)) / phraseSyllables;
    const offset = (next() - 0.5) * 2;
    const end = Math.min(out.length, at + syllable);
    for (let i = at; i < end; i++) {
      const t = (i - at) / syllable;
      const f0 = voice.f0 * 2 ** ((tone(t) * range + declination + offset) / 12);
      phase += (2 * Math.PI * f0) / sampleRate;
      const envelope = Math.sin(Math.PI * Math.min(1, t * 1.2)) ** 0.5;
      let value = 0;
      const harmonics = Math.floor(maxHarmonicHz / f0);
      for (let k = 1; k <= harmonics; k++) value += Math.sin(k * phase) / k;
      out[i] = amplitude * 0.6 * envelope * value;
    }
    at = end;
    count++;
    const rest = count % phraseSyllables === 0 ? pause : gap;
    for (let i = at; i < Math.min(out.length, at + rest); i++) out[i] = (next() - 0.5) * 0.0004;
    at += rest;
  }
  return out;
}

/** The same reading as 16-bit PCM. */
export function toInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const value = Math.max(-1, Math.min(1, samples[i] as number));
    out[i] = Math.round(value * 32767);
  }
  return out;
}
