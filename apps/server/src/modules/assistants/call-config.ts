import type { AssistantConfig, AssistantVoice } from '@callpilot/contracts';
import type { Database } from '../../db/client';
import type { AssistantSource, CallAssistant } from '../../engine/call/ports';
import type { RecognizerProfile } from '../../engine/speech/recognizer';
import type { SynthesizerProfile } from '../../engine/speech/synthesizer';
import { notFound } from '../../lib/errors';
import { getSpeechSettings } from '../speech-settings/speech-settings.service';
import { getAssistant, getPublishedVersion } from './assistants.service';
import type { ProviderResolver } from './test-chat';

/**
 * Which assistant version applies: a version number, 'live' for the live published version,
 * 'draft' for the draft as it is now (test calls and the test chat), or 'published-or-draft' for
 * the live version when there is one and the draft otherwise (a task's variables before its
 * assistant is first published).
 */
export type AssistantVersionRef = number | 'live' | 'draft' | 'published-or-draft';

/**
 * The one resolver of "which assistant configuration applies": calls, the test chat, the
 * contact import's variables and the recording's voices all ask here. Throws a 404 with the
 * reason when nothing applies.
 */
export async function resolveCallAssistant(
  db: Database,
  projectId: string,
  assistantId: string,
  ref: AssistantVersionRef,
): Promise<CallAssistant> {
  if (ref === 'draft') {
    const draft = await getAssistant(db, projectId, assistantId);
    return { assistantId, name: draft.name, version: null, config: draft.config };
  }
  const published = await getPublishedVersion(
    db,
    projectId,
    assistantId,
    typeof ref === 'number' ? ref : undefined,
  );
  if (published) {
    return { assistantId, name: published.name, version: published.version, config: published.config };
  }
  // 404 for a missing assistant first, then the reason there is no version.
  const draft = await getAssistant(db, projectId, assistantId);
  if (ref === 'published-or-draft') {
    return { assistantId, name: draft.name, version: null, config: draft.config };
  }
  throw notFound(
    typeof ref === 'number' ? `版本 v${ref} 不存在` : '小助手尚未发布，请先发布或使用草稿模拟通话',
  );
}

/** The engine's version argument (undefined = live) in the resolver's terms. */
export const versionRef = (version: number | 'draft' | undefined): AssistantVersionRef => version ?? 'live';

const FALLBACK_VOICE: AssistantVoice = { provider: 'espeak', voiceId: 'cmn+f3', speed: 1, volume: 80 };

/** The voice a recorded call is re-spoken in: its version's, or the draft's for a draft test call. */
export async function callVoice(
  db: Database,
  projectId: string,
  assistantId: string | null,
  version: number | null,
): Promise<AssistantVoice> {
  if (!assistantId) return FALLBACK_VOICE;
  try {
    const resolved = await resolveCallAssistant(db, projectId, assistantId, version ?? 'draft');
    return resolved.config.voice ?? FALLBACK_VOICE;
  } catch {
    return FALLBACK_VOICE;
  }
}

/** The variables a task's contacts fill: the task's frozen version, else the live one, else the draft. */
export async function assistantVariables(
  db: Database,
  projectId: string,
  assistantId: string,
  version: number | undefined,
): Promise<AssistantConfig['variables']> {
  try {
    return (await resolveCallAssistant(db, projectId, assistantId, version ?? 'published-or-draft')).config
      .variables;
  } catch {
    return [];
  }
}

export type RecognizerResolver = (projectId: string, providerId: string) => Promise<RecognizerProfile | null>;
export type SynthesizerResolver = (
  projectId: string,
  providerId: string,
) => Promise<SynthesizerProfile | null>;

/** The engine's view of the assistants module (see engine/call/ports.ts). */
export function assistantSource(
  db: Database,
  resolveProvider: ProviderResolver,
  resolveRecognizer: RecognizerResolver,
  resolveSynthesizer: SynthesizerResolver,
): AssistantSource {
  return {
    forCall: (projectId, assistantId, version) =>
      resolveCallAssistant(db, projectId, assistantId, versionRef(version)),
    provider: resolveProvider,
    recognizer: resolveRecognizer,
    synthesizer: resolveSynthesizer,
    speechSettings: (projectId) => getSpeechSettings(db, projectId),
  };
}
