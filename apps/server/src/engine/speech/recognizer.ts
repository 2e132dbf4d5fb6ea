import type { SpeechVendor } from '@callpilot/contracts';
import type { Clock } from '../clock';
import { createOpenAITranscriber } from './openai-transcriber';
import type { SpeechRecognizer } from './types';

/**
 * A project's speech-recognition profile as a call needs it, key decrypted. The assistants
 * module resolves it onto the call's assistant (`CallAssistant.recognizer`); the key goes no
 * further than the recogniser built from it.
 */
export interface RecognizerProfile {
  vendor: SpeechVendor;
  baseUrl: string;
  model: string;
  apiKey: string;
}

/** The recogniser a SIP leg listens with. One place to add a vendor (issue #14). */
export function createRecognizer(
  profile: RecognizerProfile,
  options: { clock?: Clock; timeoutMs?: number } = {},
): SpeechRecognizer {
  switch (profile.vendor) {
    case 'openai_compatible':
      return createOpenAITranscriber({
        baseUrl: profile.baseUrl,
        apiKey: profile.apiKey,
        model: profile.model,
        ...options,
      });
  }
}
