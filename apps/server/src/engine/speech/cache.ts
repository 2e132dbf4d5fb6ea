import type { SpeechSynthesizer, SynthesizedSpeech } from './types';

/**
 * Remembers synthesised lines, least recently used first out, up to `maxBytes` of audio.
 * Recordings repeat themselves: opening lines, closing lines, re-prompts and FAQ answers are
 * the same across thousands of calls, and each synthesis costs about 100 ms of a core.
 */
export function cachedSynthesizer(inner: SpeechSynthesizer, maxBytes = 32 * 1024 * 1024): SpeechSynthesizer {
  const cache = new Map<string, Promise<SynthesizedSpeech>>();
  const sizes = new Map<string, number>();
  let bytes = 0;
  return {
    voices: () => inner.voices(),
    synthesize(text, voice) {
      const key = `${voice.voiceId}\u0000${voice.speed}\u0000${voice.volume}\u0000${text}`;
      const hit = cache.get(key);
      if (hit) {
        // Re-insert: a Map iterates in insertion order, so the first key is the least recent.
        cache.delete(key);
        cache.set(key, hit);
        return hit;
      }
      const made = inner.synthesize(text, voice);
      cache.set(key, made);
      made.then(
        (speech) => {
          if (!cache.has(key)) return;
          sizes.set(key, speech.audio.length);
          bytes += speech.audio.length;
          for (const [oldest] of cache) {
            if (bytes <= maxBytes || oldest === key) break;
            bytes -= sizes.get(oldest) ?? 0;
            sizes.delete(oldest);
            cache.delete(oldest);
          }
        },
        // A failure is not remembered: the next call tries again.
        () => cache.delete(key),
      );
      return made;
    },
    close: () => inner.close(),
  };
}
