/**
 * The assistant's voice on a real line: its own voice (the primary) with the project's fallback
 * voice behind it, numbers rewritten to be read the Chinese way, fixed lines synthesised once per
 * voice and kept, reply sentences streamed as the vendor renders them.
 */
import type { Clock } from '../engine/clock';
import { type SentenceAudio, synthesisWithFallback, type VoiceOf } from '../engine/speech/fallback';
import { collectSynthesis } from '../engine/speech/synthesis';
import type { SpeechRecognizer } from '../engine/speech/types';
import type { LegMedia } from '../engine/telephony/types';

/** Fixed lines kept per process, least recently used out first: about 30 minutes of 8 kHz audio. */
const LINE_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Opening lines, re-prompts and closings repeat across thousands of calls: synthesising each once
 * per voice saves the vendor round trip (and its bill) on every call after the first.
 */
class LineCache {
  private readonly lines = new Map<string, Promise<Int16Array>>();
  private bytes = 0;
  private readonly sizes = new Map<string, number>();

  /** `make` says whether its audio may be kept: a line the fallback voice spoke is not. */
  get(key: string, make: () => Promise<{ pcm: Int16Array; keep: boolean }>): Promise<Int16Array> {
    const hit = this.lines.get(key);
    if (hit) {
      this.lines.delete(key);
      this.lines.set(key, hit);
      return hit;
    }
    // Calls starting together share one synthesis of their opening line.
    const making = make();
    const made = making.then((line) => line.pcm);
    this.lines.set(key, made);
    making.then(
      ({ pcm, keep }) => {
        if (this.lines.get(key) !== made) return;
        if (!keep) {
          this.lines.delete(key);
          return;
        }
        this.sizes.set(key, pcm.byteLength);
        this.bytes += pcm.byteLength;
        for (const [oldest] of this.lines) {
          if (this.bytes <= LINE_CACHE_BYTES || oldest === key) break;
          this.bytes -= this.sizes.get(oldest) ?? 0;
          this.sizes.delete(oldest);
          this.lines.delete(oldest);
        }
      },
      // A failure is not kept: the next call asks again.
      () => this.lines.delete(key),
    );
    return made;
  }
}

const lineCache = new LineCache();

export interface CallVoice extends VoiceOf {
  /** Names the voice in the fixed-line cache: provider profile (or espeak) and voice id. */
  key: string;
}

export interface CallSpeechOptions {
  clock: Clock;
  primary: CallVoice;
  fallback: CallVoice | null;
  /** First audio later than this is a failure of the primary for that sentence. */
  firstAudioTimeoutMs: number;
  recognizer: SpeechRecognizer | null;
  hotwords?: string;
  /** Rewrites what a synthesiser would misread (phone numbers, money, dates). */
  normalize?: (text: string) => string;
  onFallback?: (kind: 'synthesis', err: unknown) => void;
}

export function callSpeech(options: CallSpeechOptions): LegMedia {
  const normalize = options.normalize ?? ((text: string) => text);
  const speak = synthesisWithFallback(options.primary, options.fallback, {
    clock: options.clock,
    firstAudioTimeoutMs: options.firstAudioTimeoutMs,
    onFallback: (err) => options.onFallback?.('synthesis', err),
  });
  const { voice } = options.primary;
  return {
    synthesize: (text, speed) =>
      lineCache.get(
        `${options.primary.key}\u0000${voice.speed * speed}\u0000${voice.volume}\u0000${text}`,
        async () => {
          const line = speak(normalize(text), speed, { sampleRate: 8000 });
          const pcm = await collectSynthesis(line.chunks);
          return { pcm, keep: !line.fallback };
        },
      ),
    speakSentence: (text, speed, signal): SentenceAudio =>
      speak(normalize(text), speed, { sampleRate: 8000, signal }),
    recognizer: options.recognizer,
    hotwords: options.hotwords,
  };
}
