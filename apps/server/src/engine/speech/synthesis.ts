/**
 * Streaming speech synthesis: the interface every cloud or self-hosted TTS vendor implements
 * (CosyVoice over DashScope, Aliyun NLS, Tencent Cloud, OpenAI-compatible /audio/speech,
 * Volcengine for cloned voices). The call runtime cuts the brain's reply into sentences and
 * streams each one through `stream`, playing the first chunk while the vendor still renders
 * the rest; previews and recordings collect the whole stream (`collectSynthesis`).
 */
import type { ProviderService } from '../brain/openai-client';
import { wavToPcm } from './resample';
import type { SpeechSynthesizer } from './types';
import { encodeWav } from './wav';

export const SYNTHESIS_SERVICE: ProviderService = {
  id: 'speech_synthesis',
  name: '语音合成服务',
  profile: '语音配置',
};

/** Sample rates the engine asks vendors for: 8 kHz for the phone line, 16 kHz for previews. */
export type SynthesisSampleRate = 8000 | 16000;

/** Which voice, how fast and how loud: the assistant's voice settings, vendor-neutral. */
export interface SynthesisVoice {
  /** The vendor's voice name (CosyVoice `longxiaochun`, Tencent `101001`, a cloned voice's id). */
  voiceId: string;
  /** 1 = the vendor's normal rate; 0.5-2 mapped onto each vendor's own scale. */
  speed: number;
  /** 0-100, 80 by default; mapped onto each vendor's own scale. */
  volume: number;
}

export interface SynthesisOptions {
  sampleRate: SynthesisSampleRate;
  /** Barge-in or hang-up: stop at once, close the vendor's connection, end the iteration. */
  signal?: AbortSignal;
}

/** A preset voice a vendor offers, for the assistant editor's picker. */
export interface PresetVoice {
  voiceId: string;
  /** Chinese display name: 龙小淳（知性女声）. */
  name: string;
  gender: 'female' | 'male';
  /** zh-CN, or a dialect such as zh-HK / zh-SC where the vendor offers one. */
  language: string;
}

/**
 * One vendor's synthesis. `stream` yields 16-bit mono PCM at `options.sampleRate`, chunk by
 * chunk as the vendor sends it (chunk sizes are the vendor's; callers re-frame). Failures
 * throw a ProviderError with `service` 'speech_synthesis', a Chinese message naming what to
 * check, and never the key; an abort through `options.signal` ends the iteration quietly
 * (no throw) after closing the connection.
 */
export interface StreamingSynthesizer {
  stream(text: string, voice: SynthesisVoice, options: SynthesisOptions): AsyncIterable<Int16Array>;
  /** Releases pooled connections, if the vendor keeps any. */
  close?(): Promise<void>;
}

/** The whole of a stream as one buffer: previews, fixed-line caching, recordings. */
export async function collectSynthesis(chunks: AsyncIterable<Int16Array>): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  let length = 0;
  for await (const chunk of chunks) {
    parts.push(chunk);
    length += chunk.length;
  }
  const out = new Int16Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * A whole-line synthesiser (the offline espeak voice) behind the streaming interface: one chunk,
 * resampled to the rate asked for. It is every project's last resort, so it must fit anywhere a
 * vendor does.
 */
export function streamingFromWhole(inner: SpeechSynthesizer): StreamingSynthesizer {
  return {
    async *stream(text, voice, options) {
      if (options.signal?.aborted) return;
      const speech = await inner.synthesize(text, voice);
      if (options.signal?.aborted) return;
      yield wavToPcm(speech.audio, options.sampleRate);
    },
  };
}

/**
 * A streaming voice as a whole-line synthesiser (previews, recordings of simulated calls), with a
 * second synthesiser for the lines it cannot say: a recording must not fail because a vendor did.
 */
export function wholeFromStreaming(
  voice: StreamingSynthesizer,
  options: {
    sampleRate: SynthesisSampleRate;
    /** Another synthesiser and a voice of its own (a vendor's voice id means nothing to it). */
    fallback?: { synthesizer: SpeechSynthesizer; voice: SynthesisVoice };
    onFallback?: (err: unknown) => void;
  },
): SpeechSynthesizer {
  return {
    voices: () => [],
    async synthesize(text, chosen) {
      try {
        const pcm = await collectSynthesis(voice.stream(text, chosen, { sampleRate: options.sampleRate }));
        return {
          audio: encodeWav(pcm, options.sampleRate),
          mimeType: 'audio/wav',
          durationMs: Math.round((pcm.length * 1000) / options.sampleRate),
        };
      } catch (err) {
        if (!options.fallback) throw err;
        options.onFallback?.(err);
        return options.fallback.synthesizer.synthesize(text, {
          ...options.fallback.voice,
          speed: chosen.speed,
        });
      }
    },
    close: async () => {
      await voice.close?.();
    },
  };
}
