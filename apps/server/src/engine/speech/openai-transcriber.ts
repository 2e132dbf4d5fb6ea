import { toFile } from 'openai';
import {
  createOpenAIClient,
  ProviderError,
  type ProviderService,
  providerTimeout,
  toProviderError,
} from '../brain/openai-client';
import { type Clock, clockDeadline, systemClock } from '../clock';
import type { RecognitionOptions, SpeechRecognizer, TelephonyUtterance, Transcript } from './types';
import { emptyOrChecked, utteranceDurationMs } from './utterance';
import { encodeWav } from './wav';

export const RECOGNITION_SERVICE: ProviderService = {
  id: 'speech_recognition',
  name: '语音识别服务',
  profile: '语音识别配置',
};

/**
 * A caller waits in silence while the utterance is recognised: past a few seconds the leg is
 * better off re-prompting than waiting longer.
 */
export const RECOGNITION_TIMEOUT_MS = 8_000;

export interface OpenAITranscriberOptions {
  baseUrl: string;
  /** Empty for a local server that needs none. */
  apiKey: string;
  model: string;
  timeoutMs?: number;
  /** The timeout runs on this clock, so tests decide when it fires. */
  clock?: Clock;
}

/**
 * Speech recognition through an OpenAI-compatible `POST {baseUrl}/audio/transcriptions`
 * (OpenAI, Groq, SiliconFlow, a local whisper server...): the utterance goes up at once as a WAV.
 */
export function createOpenAITranscriber(options: OpenAITranscriberOptions): SpeechRecognizer {
  const timeoutMs = options.timeoutMs ?? RECOGNITION_TIMEOUT_MS;
  const clock = options.clock ?? systemClock;
  // The client's own timer is only a backstop for a clock that never fires; the clock decides.
  const client = createOpenAIClient(
    { baseUrl: options.baseUrl, apiKey: options.apiKey },
    { timeoutMs: timeoutMs + 5_000 },
  );

  return {
    async transcribe(utterance: TelephonyUtterance, recognition: RecognitionOptions): Promise<Transcript> {
      const empty = emptyOrChecked(utterance, recognition);
      if (empty) return empty;
      const durationMs = utteranceDurationMs(utterance);
      const deadline = clockDeadline(clock, timeoutMs, recognition.signal);
      try {
        const file = await toFile(encodeWav(utterance.pcm, utterance.sampleRate), 'utterance.wav', {
          type: 'audio/wav',
        });
        const result = await client.audio.transcriptions.create(
          {
            file,
            model: options.model,
            language: recognition.language,
            ...(recognition.prompt ? { prompt: recognition.prompt } : {}),
            response_format: 'json',
          },
          // A retry would double what the caller waits in silence; the leg re-prompts instead.
          { signal: deadline.signal, maxRetries: 0 },
        );
        const text: unknown = (result as { text?: unknown }).text;
        if (typeof text !== 'string') {
          throw new ProviderError(
            'bad_request',
            `${RECOGNITION_SERVICE.name}的应答中没有识别文本，请确认接口地址指向 OpenAI 兼容的 /audio/transcriptions 接口`,
            undefined,
            RECOGNITION_SERVICE.id,
          );
        }
        return { text: text.trim(), durationMs };
      } catch (err) {
        if (deadline.timedOut()) throw providerTimeout(timeoutMs, RECOGNITION_SERVICE);
        if (recognition.signal?.aborted) throw recognition.signal.reason;
        throw toProviderError(err, options.apiKey, timeoutMs, RECOGNITION_SERVICE);
      } finally {
        deadline.dispose();
      }
    },
  };
}
