/**
 * Primary and fallback providers, as a call uses them (语音配置: one of each per kind). A caller
 * must never wait in silence because one vendor is down or slow: the fallback takes over when
 * the primary fails or passes its timeout, and the turn says so (`fallback`).
 */
import { ProviderError, providerTimeout } from '../brain/openai-client';
import type { Clock } from '../clock';
import { RECOGNITION_SERVICE } from './openai-transcriber';
import {
  type StreamingSynthesizer,
  SYNTHESIS_SERVICE,
  type SynthesisOptions,
  type SynthesisVoice,
} from './synthesis';
import type {
  RecognitionOptions,
  RecognitionSession,
  SpeechRecognizer,
  TelephonyUtterance,
  Transcript,
} from './types';

/**
 * After a primary failure, the fallback serves this long before the primary is tried again: a
 * vendor that is down would otherwise cost every turn its full timeout.
 */
export const PRIMARY_RETRY_AFTER_MS = 30_000;

/** Whether an error is the caller's own abort (hang-up, barge-in) rather than a provider failure. */
const isAbort = (err: unknown, signal?: AbortSignal) =>
  signal?.aborted === true || (err instanceof Error && err.name === 'AbortError');

/** Runs `work` with a deadline on `clock`; the deadline rejects with the service's timeout error. */
async function withTimeout<T>(
  clock: Clock,
  timeoutMs: number,
  caller: AbortSignal | undefined,
  timeoutError: () => Error,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const request = new AbortController();
  const stop = new AbortController();
  const onCaller = () => request.abort(caller?.reason);
  caller?.addEventListener('abort', onCaller, { once: true });
  try {
    return await Promise.race([
      work(request.signal),
      clock.sleep(timeoutMs, stop.signal).then(() => {
        request.abort();
        throw timeoutError();
      }),
    ]);
  } finally {
    stop.abort();
    caller?.removeEventListener('abort', onCaller);
  }
}

/**
 * A recogniser that answers with the fallback when the primary fails or is slower than
 * `timeoutMs` for a whole utterance. Streaming sessions are the primary's while it is healthy:
 * a session that breaks is reported by its `finish()`, and the leg then calls `transcribe`,
 * which this sends to the fallback (the primary has just failed).
 */
export function recognizerWithFallback(
  primary: SpeechRecognizer,
  fallback: SpeechRecognizer | null,
  options: { clock: Clock; timeoutMs: number; onFallback?: (err: unknown) => void },
): SpeechRecognizer {
  if (!fallback) return primary;
  const { clock, timeoutMs } = options;
  let primaryFailedAt: number | null = null;
  const primaryHealthy = () =>
    primaryFailedAt === null || clock.now() - primaryFailedAt >= PRIMARY_RETRY_AFTER_MS;
  const markFailed = (err: unknown) => {
    primaryFailedAt = clock.now();
    options.onFallback?.(err);
  };

  const viaFallback = async (utterance: TelephonyUtterance, recognition: RecognitionOptions) => ({
    ...(await fallback.transcribe(utterance, recognition)),
    fallback: true,
  });

  const recognizer: SpeechRecognizer = {
    async transcribe(utterance, recognition): Promise<Transcript> {
      if (!primaryHealthy()) return viaFallback(utterance, recognition);
      try {
        return await withTimeout(
          clock,
          timeoutMs,
          recognition.signal,
          () => providerTimeout(timeoutMs, RECOGNITION_SERVICE),
          (signal) => primary.transcribe(utterance, { ...recognition, signal }),
        );
      } catch (err) {
        if (isAbort(err, recognition.signal)) throw err;
        markFailed(err);
        return viaFallback(utterance, recognition);
      }
    },
  };
  if (primary.openSession) {
    const open = primary.openSession.bind(primary);
    recognizer.openSession = (recognition): RecognitionSession => {
      // A primary known to be down gets no stream: the leg buffers the utterance for transcribe().
      if (!primaryHealthy())
        throw new ProviderError(
          'upstream',
          '主识别服务暂不可用，已改用备用识别服务',
          undefined,
          'speech_recognition',
        );
      const session = open(recognition);
      return {
        write: (pcm) => session.write(pcm),
        onPartial: (listener) => session.onPartial(listener),
        finish: () =>
          session.finish().catch((err: unknown) => {
            if (!isAbort(err, recognition.signal)) markFailed(err);
            throw err;
          }),
        abort: () => session.abort(),
      };
    };
  }
  return recognizer;
}

/** One voice of one synthesiser: what speaks a sentence. */
export interface VoiceOf {
  synthesizer: StreamingSynthesizer;
  voice: SynthesisVoice;
}

/** A sentence being spoken: its audio as it comes, and whether the fallback voice had to speak it. */
export interface SentenceAudio {
  chunks: AsyncIterable<Int16Array>;
  /** True once the fallback took over (read after the iteration ends). */
  readonly fallback: boolean;
}

/**
 * Speaks with the primary voice; when it fails before its first audio, or gives none within
 * `firstAudioTimeoutMs`, the fallback speaks the sentence instead. A failure after audio started
 * repeats the whole sentence in the fallback voice: a caller who heard half a sentence and then
 * silence would have lost the turn.
 */
export function synthesisWithFallback(
  primary: VoiceOf,
  fallback: VoiceOf | null,
  options: { clock: Clock; firstAudioTimeoutMs: number; onFallback?: (err: unknown) => void },
): (text: string, speed: number, synthesis: SynthesisOptions) => SentenceAudio {
  const { clock, firstAudioTimeoutMs } = options;
  let primaryFailedAt: number | null = null;
  const primaryHealthy = () =>
    primaryFailedAt === null || clock.now() - primaryFailedAt >= PRIMARY_RETRY_AFTER_MS;

  return (text, speed, synthesis) => {
    const state = { fallback: false };
    const voiceAt = (of: VoiceOf) => ({ ...of.voice, speed: of.voice.speed * speed });
    async function* fromFallback(): AsyncGenerator<Int16Array> {
      if (!fallback) return;
      state.fallback = true;
      yield* fallback.synthesizer.stream(text, voiceAt(fallback), synthesis);
    }
    async function* chunks(): AsyncGenerator<Int16Array> {
      if (fallback && !primaryHealthy()) {
        yield* fromFallback();
        return;
      }
      const attempt = new AbortController();
      const onCaller = () => attempt.abort(synthesis.signal?.reason);
      synthesis.signal?.addEventListener('abort', onCaller, { once: true });
      const iterator = primary.synthesizer
        .stream(text, voiceAt(primary), { ...synthesis, signal: attempt.signal })
        [Symbol.asyncIterator]();
      let started = false;
      try {
        for (;;) {
          let next: IteratorResult<Int16Array>;
          if (started) {
            next = await iterator.next();
          } else {
            const stop = new AbortController();
            next = await Promise.race([
              iterator.next(),
              clock.sleep(firstAudioTimeoutMs, stop.signal).then(() => {
                throw providerTimeout(firstAudioTimeoutMs, SYNTHESIS_SERVICE);
              }),
            ]).finally(() => stop.abort());
          }
          if (next.done) return;
          started = true;
          yield next.value;
        }
      } catch (err) {
        if (isAbort(err, synthesis.signal) || !fallback) throw err;
        attempt.abort();
        primaryFailedAt = clock.now();
        options.onFallback?.(err);
        yield* fromFallback();
      } finally {
        synthesis.signal?.removeEventListener('abort', onCaller);
        // A generator left early (barge-in, a failure) must close the vendor's stream too.
        attempt.abort();
        void iterator.return?.().catch(() => undefined);
      }
    }
    return {
      chunks: chunks(),
      get fallback() {
        return state.fallback;
      },
    };
  };
}
