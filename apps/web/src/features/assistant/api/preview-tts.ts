import type { AssistantVoice } from '@callpilot/contracts';
import { postForBlob } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';

/** Synthesises `text` with `voice` on the server; resolves with the WAV bytes. */
export function previewTts(projectId: string, text: string, voice: AssistantVoice): Promise<Blob> {
  return postForBlob(projectUrl(projectId, '/tts/preview'), { text, voice });
}
