import type { AssistantVoice, CallTurn } from '@callpilot/contracts';
import { MAX_SYNTHESIS_CHARS } from '../speech/espeak';
import { wavToPcm } from '../speech/resample';
import type { SpeechSynthesizer } from '../speech/types';
import { encodeWav, readWav } from '../speech/wav';

type Voice = Pick<AssistantVoice, 'voiceId' | 'speed' | 'volume'>;

export interface MixRecordingInput {
  turns: CallTurn[];
  synthesizer: SpeechSynthesizer;
  /** Speaks the assistant's turns in its own (provider) voice; absent: `synthesizer` speaks both. */
  assistantSynthesizer?: SpeechSynthesizer;
  assistantVoice: Voice;
  calleeVoice: Voice;
}

export interface MixedRecording {
  /** Mono 16-bit PCM WAV at the synthesiser's sample rate. */
  wav: Buffer;
  durationMs: number;
  /** The turns moved to where they are heard in `wav`. */
  turns: CallTurn[];
}

/** Silence kept between two turns whose audio would otherwise touch. */
export const TURN_GAP_MS = 250;
/** An interrupted line is heard at least this long before the callee cuts in. */
const MIN_INTERRUPTED_MS = 300;
const DEFAULT_SAMPLE_RATE = 22_050;
const DTMF_TONE_MS = 180;
const DTMF_PAUSE_MS = 80;

/** The two frequencies of each DTMF key (row, column). */
const DTMF_FREQUENCIES: Record<string, [number, number]> = {
  '1': [697, 1209],
  '2': [697, 1336],
  '3': [697, 1477],
  '4': [770, 1209],
  '5': [770, 1336],
  '6': [770, 1477],
  '7': [852, 1209],
  '8': [852, 1336],
  '9': [852, 1477],
  '*': [941, 1209],
  '0': [941, 1336],
  '#': [941, 1477],
};

/** Key presses as the phone network plays them: a two-tone burst per key. */
export function dtmfTones(digits: string, sampleRate: number): Int16Array {
  const tone = Math.round((DTMF_TONE_MS * sampleRate) / 1000);
  const pause = Math.round((DTMF_PAUSE_MS * sampleRate) / 1000);
  const keys = [...digits].filter((d) => DTMF_FREQUENCIES[d]);
  const out = new Int16Array(Math.max(0, keys.length * (tone + pause) - pause));
  keys.forEach((key, k) => {
    const [low, high] = DTMF_FREQUENCIES[key] as [number, number];
    const base = k * (tone + pause);
    for (let i = 0; i < tone; i++) {
      const t = i / sampleRate;
      out[base + i] = Math.round(6000 * (Math.sin(2 * Math.PI * low * t) + Math.sin(2 * Math.PI * high * t)));
    }
  });
  return out;
}

const clipText = (text: string) => [...text.trim()].slice(0, MAX_SYNTHESIS_CHARS).join('');

/**
 * The call's recording, made after the fact: both sides synthesised offline in two voices and
 * laid out on one track. Each turn starts at its recorded offset, but never before the previous
 * turn's audio ended plus a short gap (synthesised speech is rarely exactly as long as the
 * simulated line), and an interrupted assistant line is cut where the callee came in. The returned
 * turns carry the offsets where they are actually heard, so the console can seek by turn.
 */
export async function mixRecording(input: MixRecordingInput): Promise<MixedRecording> {
  const { synthesizer } = input;
  const calleeVoice =
    input.calleeVoice.voiceId === input.assistantVoice.voiceId
      ? { ...input.calleeVoice, voiceId: input.assistantVoice.voiceId === 'cmn+m3' ? 'cmn+f4' : 'cmn+m3' }
      : input.calleeVoice;
  const ordered = [...input.turns].sort((a, b) => a.index - b.index);

  let sampleRate = 0;
  const clips: (Int16Array | null)[] = [];
  const raw: (Buffer | null)[] = [];
  for (const turn of ordered) {
    const text = clipText(turn.text);
    if (!text) {
      raw.push(null);
      continue;
    }
    const speech =
      turn.speaker === 'assistant'
        ? await (input.assistantSynthesizer ?? synthesizer).synthesize(text, input.assistantVoice)
        : await synthesizer.synthesize(text, calleeVoice);
    sampleRate ||= readWav(speech.audio).sampleRate;
    raw.push(speech.audio);
  }
  sampleRate ||= DEFAULT_SAMPLE_RATE;
  ordered.forEach((turn, i) => {
    const audio = raw[i];
    if (audio) clips.push(wavToPcm(audio, sampleRate));
    else clips.push(turn.dtmf ? dtmfTones(turn.dtmf, sampleRate) : null);
  });

  const msToSamples = (ms: number) => Math.round((ms * sampleRate) / 1000);
  const placed: { at: number; samples: Int16Array }[] = [];
  const retimed: CallTurn[] = [];
  let cursorMs = 0;
  ordered.forEach((turn, i) => {
    let clip = clips[i] ?? null;
    const startMs = Math.max(turn.startMs, placed.length > 0 ? cursorMs + TURN_GAP_MS : 0);
    if (clip && turn.interrupted) {
      const next = ordered[i + 1];
      if (next && next.speaker === 'callee') {
        const heardMs = Math.max(MIN_INTERRUPTED_MS, next.startMs - turn.startMs);
        clip = clip.subarray(0, Math.min(clip.length, msToSamples(heardMs)));
      }
    }
    if (!clip || clip.length === 0) {
      retimed.push({ ...turn, startMs: Math.round(cursorMs), endMs: Math.round(cursorMs) });
      return;
    }
    const durationMs = (clip.length * 1000) / sampleRate;
    placed.push({ at: msToSamples(startMs), samples: clip });
    cursorMs = startMs + durationMs;
    retimed.push({ ...turn, startMs: Math.round(startMs), endMs: Math.round(cursorMs) });
  });

  const total = placed.reduce((max, p) => Math.max(max, p.at + p.samples.length), 0);
  const track = new Int16Array(total);
  // Turns never overlap (each starts after the previous ended), so placing is copying.
  for (const { at, samples } of placed) track.set(samples, at);
  return {
    wav: encodeWav(track, sampleRate),
    durationMs: Math.round((total * 1000) / sampleRate),
    turns: retimed,
  };
}
