import type { AssistantConfig, SpeechVendor } from '@callpilot/contracts';
import type { AssistantSource } from '../call/ports';
import type { Clock } from '../clock';
import { createOpenAITranscriber } from './openai-transcriber';
import type { SpeechRecognizer } from './types';

/**
 * A project's speech-recognition profile as a call needs it, key decrypted. The assistants
 * module resolves it per call (`AssistantSource.recognizer`); the key goes no further than the
 * recogniser built from it.
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

/**
 * The recogniser an assistant listens with on a real line, or null when its hearing names no
 * profile (or the profile is gone): such a call still runs, understanding key presses only.
 */
export async function recognizerFor(
  source: Pick<AssistantSource, 'recognizer'>,
  projectId: string,
  config: Pick<AssistantConfig, 'hearing'>,
  options: { clock?: Clock; timeoutMs?: number } = {},
): Promise<SpeechRecognizer | null> {
  const providerId = config.hearing.providerId;
  const profile = providerId ? await source.recognizer(projectId, providerId) : null;
  return profile ? createRecognizer(profile, options) : null;
}
