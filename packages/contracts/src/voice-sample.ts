import { z } from 'zod';
import { entityId, requiredText } from './common';
import { VOICE_SAMPLE_RULES } from './speech';

/*
 * The check a voice-cloning sample must pass, run in the browser before upload (on the decoded
 * recording) and again on the server (on the uploaded WAV), so both say the same thing in the same
 * words. Pure TypeScript over Float32 samples in [-1, 1]: no DOM, no Node.
 */

export type VoiceSampleProblemCode =
  | 'too_short'
  | 'too_long'
  | 'low_sample_rate'
  | 'no_speech'
  | 'too_quiet'
  | 'clipping'
  | 'too_much_silence'
  | 'multiple_speakers';

export interface VoiceSampleProblem {
  code: VoiceSampleProblemCode;
  /** Chinese, naming what is wrong and what to do about it. */
  message: string;
}

export interface VoiceSampleAnalysis {
  durationMs: number;
  /** RMS level of the speech (the non-silent frames), dBFS; -Infinity for digital silence. */
  loudnessDb: number;
  /** Share of samples at full scale. */
  clippedRatio: number;
  /** Share of 20 ms frames that are silence. */
  silenceRatio: number;
  problems: VoiceSampleProblem[];
}

/**
 * Silence and speaker rules the vendors state in words, not numbers. DashScope asks for at least
 * 5 s of continuous reading with short pauses only; more than 40% silence in a 10-20 s sample
 * leaves less than that. A second voice must sit this far from the first (in semitones of F0)
 * and hold this share of the voiced frames to count as a speaker rather than intonation (see
 * hasSecondSpeaker).
 */
export const VOICE_SAMPLE_HEURISTICS = {
  maxSilenceRatio: 0.4,
  speakerSeparationSemitones: 7,
  speakerMinShare: 0.15,
} as const;

const FRAME_MS = 20;
/** Full scale for 16-bit audio decoded to float is 32767/32768; a hair below catches it. */
const CLIP_LEVEL = 0.999;
/** Frames quieter than this, or this far below the loudest speech, are silence. */
const SILENCE_FLOOR_DB = -55;
const SILENCE_BELOW_PEAK_DB = 35;
const PITCH_RATE = 8000;
const MIN_F0 = 70;
const MAX_F0 = 400;
/** Normalised autocorrelation above this marks a frame as voiced (periodic). */
const VOICING_THRESHOLD = 0.6;

const toDb = (rms: number) => (rms > 0 ? 20 * Math.log10(rms) : Number.NEGATIVE_INFINITY);
const seconds = (ms: number) => (ms / 1000).toFixed(1).replace(/\.0$/, '');
const percent = (ratio: number) => {
  const value = ratio * 100;
  return value >= 1 ? String(Math.round(value)) : value.toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
};

/**
 * Cheap low-pass and decimation to ~8 kHz for pitch tracking: a box filter over the decimation
 * factor keeps F0 (70-400 Hz) and its first harmonics while making autocorrelation 36x cheaper
 * on 48 kHz recordings.
 */
function decimate(samples: Float32Array, sampleRate: number): { data: Float32Array; rate: number } {
  const factor = Math.max(1, Math.floor(sampleRate / PITCH_RATE));
  if (factor === 1) return { data: samples, rate: sampleRate };
  const out = new Float32Array(Math.floor(samples.length / factor));
  for (let i = 0; i < out.length; i++) {
    let sum = 0;
    const start = i * factor;
    for (let k = 0; k < factor; k++) sum += samples[start + k] as number;
    out[i] = sum / factor;
  }
  return { data: out, rate: sampleRate / factor };
}

/**
 * F0 of one frame by normalised autocorrelation, or null when the frame is not periodic enough to
 * be voiced. The smallest lag whose correlation comes within 90% of the best wins: a period's
 * multiples correlate almost as well, and picking them would halve the pitch (an octave error that
 * would look exactly like a second, lower voice).
 */
function frameF0(data: Float32Array, start: number, length: number, rate: number): number | null {
  const minLag = Math.floor(rate / MAX_F0);
  const maxLag = Math.ceil(rate / MIN_F0);
  if (start + length + maxLag > data.length) return null;
  let mean = 0;
  for (let i = 0; i < length + maxLag; i++) mean += data[start + i] as number;
  mean /= length + maxLag;
  const x = (i: number) => (data[start + i] as number) - mean;
  let energy0 = 0;
  for (let i = 0; i < length; i++) energy0 += x(i) * x(i);
  if (energy0 <= 0) return null;
  const scores = new Float32Array(maxLag + 1);
  let best = 0;
  for (let lag = minLag; lag <= maxLag; lag++) {
    let cross = 0;
    let energyLag = 0;
    for (let i = 0; i < length; i++) {
      const shifted = x(i + lag);
      cross += x(i) * shifted;
      energyLag += shifted * shifted;
    }
    const score = energyLag > 0 ? cross / Math.sqrt(energy0 * energyLag) : 0;
    scores[lag] = score;
    if (score > best) best = score;
  }
  if (best < VOICING_THRESHOLD) return null;
  for (let lag = minLag + 1; lag < maxLag; lag++) {
    const score = scores[lag] as number;
    const isPeak = score >= (scores[lag - 1] as number) && score >= (scores[lag + 1] as number);
    if (isPeak && score >= 0.9 * best) {
      // Parabolic interpolation around the peak for sub-sample precision.
      const left = scores[lag - 1] as number;
      const right = scores[lag + 1] as number;
      const denominator = left - 2 * score + right;
      const offset = denominator === 0 ? 0 : (0.5 * (left - right)) / denominator;
      return rate / (lag + offset);
    }
  }
  return null;
}

/** 20 ms frame levels, and which frames hold sound rather than silence. */
function measureFrames(samples: Float32Array, sampleRate: number) {
  const frameLength = Math.max(1, Math.round((sampleRate * FRAME_MS) / 1000));
  const frameDbs: number[] = [];
  for (let start = 0; start + frameLength <= samples.length; start += frameLength) {
    let sum = 0;
    for (let i = start; i < start + frameLength; i++) sum += (samples[i] as number) ** 2;
    frameDbs.push(toDb(Math.sqrt(sum / frameLength)));
  }
  const loudest = frameDbs.reduce((max, db) => Math.max(max, db), Number.NEGATIVE_INFINITY);
  const silenceBelow = Math.max(SILENCE_FLOOR_DB, loudest - SILENCE_BELOW_PEAK_DB);
  const speechFrames: number[] = [];
  frameDbs.forEach((db, index) => {
    if (db >= silenceBelow) speechFrames.push(index);
  });
  return { frameDbs, frameLength, speechFrames, loudest };
}

function framePitches(
  samples: Float32Array,
  sampleRate: number,
  frames: readonly number[],
  frameLength: number,
): number[] {
  const { data, rate } = decimate(samples, sampleRate);
  const pitchFrame = Math.round(rate * 0.04);
  const f0s: number[] = [];
  for (const index of frames) {
    const f0 = frameF0(data, Math.round((index * frameLength * rate) / sampleRate), pitchFrame, rate);
    if (f0 !== null) f0s.push(f0);
  }
  return f0s;
}

/** F0 (Hz) of every voiced 20 ms frame: what the speaker check looks at. */
export function voicedPitches(samples: Float32Array, sampleRate: number): number[] {
  const { speechFrames, frameLength } = measureFrames(samples, sampleRate);
  return framePitches(samples, sampleRate, speechFrames, frameLength);
}

const semitones = (f0: number) => 12 * Math.log2(f0 / 55);

/**
 * Whether the voiced frames' F0 falls into two well-separated groups, each with a real share.
 *
 * Why this works: one person's pitch moves with intonation and Mandarin tones around a single
 * centre. Its frames do split into a higher group (tone 1, the start of tone 4) and a lower one
 * (tone 3, ends of phrases), but those groups' centres lie about 4-6 semitones apart, even for a
 * lively reader. A man (about 85-155 Hz) and a woman (about 165-255 Hz) reading in turn put their
 * groups 9-10 semitones apart. So the frames are split in two (1-D k-means on semitones) and two
 * speakers are reported when the centres are at least `speakerSeparationSemitones` apart and the
 * smaller group holds at least `speakerMinShare` of the frames (a few mis-tracked frames cannot).
 * Two speakers of the same sex and pitch are not told apart: that needs a speaker embedding,
 * far beyond a check that runs in the browser.
 */
export function hasSecondSpeaker(f0s: readonly number[]): boolean {
  const rules = VOICE_SAMPLE_HEURISTICS;
  if (f0s.length < 20) return false;
  const values = f0s.map(semitones).sort((a, b) => a - b);
  let low = values[0] as number;
  let high = values[values.length - 1] as number;
  let split = 0;
  for (let round = 0; round < 50; round++) {
    const threshold = (low + high) / 2;
    let count = 0;
    let lowSum = 0;
    let highSum = 0;
    for (const value of values) {
      if (value < threshold) {
        lowSum += value;
        count++;
      } else highSum += value;
    }
    if (count === 0 || count === values.length) return false;
    const nextLow = lowSum / count;
    const nextHigh = highSum / (values.length - count);
    split = count;
    if (nextLow === low && nextHigh === high) break;
    low = nextLow;
    high = nextHigh;
  }
  const share = Math.min(split, values.length - split) / values.length;
  return share >= rules.speakerMinShare && high - low >= rules.speakerSeparationSemitones;
}

/** Measures a recording and lists every reason a vendor would clone it badly, in Chinese. */
export function analyzeVoiceSample(samples: Float32Array, sampleRate: number): VoiceSampleAnalysis {
  const rules = VOICE_SAMPLE_RULES;
  const durationMs = sampleRate > 0 ? Math.round((samples.length / sampleRate) * 1000) : 0;
  const problems: VoiceSampleProblem[] = [];

  let clipped = 0;
  for (let i = 0; i < samples.length; i++) if (Math.abs(samples[i] as number) >= CLIP_LEVEL) clipped++;
  const clippedRatio = samples.length ? clipped / samples.length : 0;

  const { frameDbs, frameLength, speechFrames, loudest } = measureFrames(samples, sampleRate);
  const silenceRatio = frameDbs.length ? 1 - speechFrames.length / frameDbs.length : 1;
  let speechEnergy = 0;
  for (const index of speechFrames) speechEnergy += 10 ** ((frameDbs[index] as number) / 10);
  const loudnessDb = speechFrames.length
    ? 10 * Math.log10(speechEnergy / speechFrames.length)
    : Number.NEGATIVE_INFINITY;

  if (sampleRate < rules.minSampleRate) {
    problems.push({
      code: 'low_sample_rate',
      message: `采样率为 ${sampleRate} Hz，低于 ${rules.minSampleRate} Hz：请用 16 kHz 或更高的采样率录制（电话录音不能用于复刻）`,
    });
  }
  if (durationMs < rules.minSeconds * 1000) {
    problems.push({
      code: 'too_short',
      message: `录音时长 ${seconds(durationMs)} 秒，不足 ${rules.minSeconds} 秒：请连续朗读 ${rules.minSeconds}～${rules.maxSeconds} 秒`,
    });
  } else if (durationMs > rules.maxSeconds * 1000) {
    problems.push({
      code: 'too_long',
      message: `录音时长 ${seconds(durationMs)} 秒，超过 ${rules.maxSeconds} 秒：请剪短或重录为 ${rules.minSeconds}～${rules.maxSeconds} 秒`,
    });
  }
  if (loudest < SILENCE_FLOOR_DB) {
    problems.push({ code: 'no_speech', message: '没有检测到说话声：请检查麦克风是否正常、是否选对了文件' });
    return { durationMs, loudnessDb, clippedRatio, silenceRatio, problems };
  }
  if (loudnessDb < rules.minLoudnessDb) {
    problems.push({
      code: 'too_quiet',
      message: `音量太低（${Math.round(loudnessDb)} dB，至少需要 ${rules.minLoudnessDb} dB）：请靠近麦克风、提高音量后重新录制`,
    });
  }
  if (clippedRatio > rules.maxClippedRatio) {
    problems.push({
      code: 'clipping',
      message: `录音有爆音（${percent(clippedRatio)}% 的采样达到满幅）：请调低麦克风音量或离远一些重新录制`,
    });
  }
  if (silenceRatio > VOICE_SAMPLE_HEURISTICS.maxSilenceRatio) {
    problems.push({
      code: 'too_much_silence',
      message: `静音占了 ${percent(silenceRatio)}%：请连续朗读，中间停顿不要太长，并剪掉开头和结尾的空白`,
    });
  }

  const f0s = framePitches(samples, sampleRate, speechFrames, frameLength);
  if (hasSecondSpeaker(f0s)) {
    problems.push({
      code: 'multiple_speakers',
      message: '录音中似乎有不止一个人的声音：请只保留一个人朗读的部分，避免他人插话或背景人声',
    });
  }
  return { durationMs, loudnessDb, clippedRatio, silenceRatio, problems };
}

// ---- The create request (multipart fields) ----

/**
 * The text fields of `POST .../voice-clones` (multipart/form-data, the sample in field `sample`).
 * Volcengine's speaker id is a slot bought in its console (S_ followed by letters and digits).
 */
export const voiceCloneCreateFields = z.object({
  name: requiredText('音色名称', 30),
  providerId: entityId('语音合成配置'),
  speakerId: z
    .string()
    .trim()
    .max(64, { error: '音色 ID 不能超过 64 个字符' })
    .regex(/^(S_[A-Za-z0-9_]+)?$/, { error: '音色 ID 须为火山引擎控制台中的 S_ 开头的音色 ID' })
    .default(''),
});
export type VoiceCloneCreateFields = z.input<typeof voiceCloneCreateFields>;
