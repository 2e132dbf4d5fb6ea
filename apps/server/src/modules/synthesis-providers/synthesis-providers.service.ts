import {
  OFFLINE_VOICE_PROVIDER,
  type Paged,
  type PageQuery,
  SYNTHESIS_VENDOR_DEFAULTS,
  SYNTHESIS_VENDOR_RULES,
  type SynthesisProvider,
  type SynthesisProviderTestResult,
  type SynthesisVendor,
  type synthesisProviderWriteRequest,
  type VoiceOption,
} from '@callpilot/contracts';
import { and, asc, count, eq } from 'drizzle-orm';
import type { z } from 'zod';
import type { Database } from '../../db/client';
import { synthesisProviders, voiceClones } from '../../db/schema';
import { ProviderError } from '../../engine/brain/openai-client';
import type { Clock } from '../../engine/clock';
import { ESPEAK_VOICES } from '../../engine/speech/espeak';
import {
  collectSynthesis,
  type StreamingSynthesizer,
  SYNTHESIS_SERVICE,
  type SynthesisVoice,
} from '../../engine/speech/synthesis';
import { createSynthesizer, type SynthesizerProfile } from '../../engine/speech/synthesizer';
import { PRESET_VOICES } from '../../engine/speech/voices';
import { encodeWav } from '../../engine/speech/wav';
import { AppError } from '../../lib/errors';
import type { AppSecret } from '../../lib/secret-box';
import {
  keyShown,
  type ProfileKind,
  profileStore,
  testFailureMessage,
} from '../provider-profiles/provider-profiles';
import { settingsUsing } from '../speech-settings/speech-settings.service';
import { listReadyCloneOptions } from '../voice-clones/voice-clones.service';

type WriteInput = z.output<typeof synthesisProviderWriteRequest>;
type Row = typeof synthesisProviders.$inferSelect;

export const SYNTHESIS_PROFILE: ProfileKind = {
  label: '语音合成配置',
  configSection: 'voice',
  configField: 'provider',
};
const store = profileStore(synthesisProviders, SYNTHESIS_PROFILE);

function toDto(row: Row): SynthesisProvider {
  return {
    id: row.id,
    name: row.name,
    vendor: row.vendor,
    baseUrl: row.baseUrl,
    model: row.model,
    appId: row.appId,
    keyId: row.keyId,
    ...keyShown(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * The write as stored: empty fields take the vendor's default, and fields the vendor does not use
 * are stored empty, so a profile switched from Tencent to CosyVoice keeps no stale AppID.
 */
function normalised(input: WriteInput) {
  const rules = SYNTHESIS_VENDOR_RULES[input.vendor];
  const defaults = SYNTHESIS_VENDOR_DEFAULTS[input.vendor];
  const used = (field: 'appId' | 'keyId' | 'model', value: string) => (rules[field] ? value : '');
  return {
    write: { ...input, baseUrl: input.baseUrl || defaults.baseUrl },
    own: {
      vendor: input.vendor,
      model: used('model', input.model) || defaults.model,
      appId: used('appId', input.appId),
      keyId: used('keyId', input.keyId),
    },
  };
}

/** Cloud vendors sign or authorise with their secret: a profile of theirs without one could never speak. */
function assertSecretKept(vendor: SynthesisVendor, keptOrSent: boolean) {
  const required = SYNTHESIS_VENDOR_RULES[vendor].secretRequired;
  if (required && !keptOrSent) {
    throw new AppError(400, 'VALIDATION_FAILED', `字段 apiKey：请输入${required.label}`);
  }
}

export async function listSynthesisProviders(
  db: Database,
  projectId: string,
  page: PageQuery,
): Promise<Paged<SynthesisProvider>> {
  const found = await store.list(db, projectId, page);
  return { ...found, items: found.items.map(toDto) };
}

export async function getSynthesisProvider(
  db: Database,
  projectId: string,
  id: string,
): Promise<SynthesisProvider> {
  return toDto(await store.get(db, projectId, id));
}

export async function createSynthesisProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  input: WriteInput,
): Promise<SynthesisProvider> {
  assertSecretKept(input.vendor, Boolean(input.apiKey));
  const { write, own } = normalised(input);
  return toDto(await store.create(db, secret, projectId, write, own));
}

/**
 * An omitted or empty apiKey keeps the stored one. Across a vendor change it is dropped: one
 * vendor's key is no credential for another and must not be sent to its server.
 */
export async function updateSynthesisProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  id: string,
  input: WriteInput,
): Promise<SynthesisProvider> {
  const stored = await store.get(db, projectId, id);
  const clearApiKey = input.clearApiKey || (stored.vendor !== input.vendor && !input.apiKey);
  assertSecretKept(input.vendor, Boolean(input.apiKey) || (!clearApiKey && stored.apiKeyEncrypted !== ''));
  const { write, own } = normalised({ ...input, clearApiKey });
  return toDto(await store.update(db, secret, projectId, id, write, own));
}

/**
 * Refused while an assistant speaks with it, while it gives the project's fallback voice, or while
 * cloned voices live on it: each would fall silent (or lose a paid clone) without warning.
 */
export function deleteSynthesisProvider(db: Database, projectId: string, id: string): Promise<void> {
  return store.remove(db, projectId, id, async () => {
    const inSettings = await settingsUsing(db, projectId, id);
    if (inSettings) return inSettings;
    const [clones] = await db
      .select({ n: count() })
      .from(voiceClones)
      .where(and(eq(voiceClones.projectId, projectId), eq(voiceClones.providerId, id)));
    const n = clones?.n ?? 0;
    return n > 0 ? `该语音合成配置下还有 ${n} 个复刻音色，请先在声音复刻中删除它们后再删除` : null;
  });
}

/** Whether the project has this profile (an assistant's voice may only name its own project's). */
export async function synthesisProviderExists(db: Database, projectId: string, id: string): Promise<boolean> {
  return (await store.find(db, projectId, id)) !== undefined;
}

const synthesizerColumns = (row: Row): Omit<SynthesizerProfile, 'apiKey'> => ({
  vendor: row.vendor,
  baseUrl: row.baseUrl,
  model: row.model,
  appId: row.appId,
  keyId: row.keyId,
});

/** The endpoint and decrypted key a call's synthesiser needs; null when the profile is gone. */
export async function resolveSynthesisProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  id: string,
): Promise<SynthesizerProfile | null> {
  const row = await store.find(db, projectId, id);
  if (!row) return null;
  return { ...synthesizerColumns(row), apiKey: store.openKey(secret, row) };
}

/**
 * Every voice the assistant editor offers: the offline voices, then each synthesis profile's
 * preset voices under the profile's name. Voice cloning adds the project's ready clones here.
 */
export async function listVoiceOptions(db: Database, projectId: string): Promise<VoiceOption[]> {
  const profiles = await db
    .select({ id: synthesisProviders.id, name: synthesisProviders.name, vendor: synthesisProviders.vendor })
    .from(synthesisProviders)
    .where(eq(synthesisProviders.projectId, projectId))
    .orderBy(asc(synthesisProviders.createdAt), asc(synthesisProviders.id));
  const byId = new Map(profiles.map((profile) => [profile.id, profile]));
  const clones = (await listReadyCloneOptions(db, projectId)).flatMap((clone): VoiceOption[] => {
    const profile = byId.get(clone.provider);
    return profile ? [{ ...clone, providerName: profile.name, vendor: profile.vendor }] : [];
  });
  return [
    ...ESPEAK_VOICES,
    ...clones,
    ...profiles.flatMap((profile) =>
      PRESET_VOICES[profile.vendor].map(
        (voice): VoiceOption => ({
          provider: profile.id,
          voiceId: voice.voiceId,
          name: voice.name,
          language: voice.language,
          gender: voice.gender,
          providerName: profile.name,
          vendor: profile.vendor,
        }),
      ),
    ),
  ];
}

/** What a profile's test says: short, and a Mandarin sentence a phone line typically carries. */
export const SYNTHESIS_TEST_SENTENCE = '您好，这里是语音合成测试，请问您现在方便接听电话吗？';

/** The sample rate previews and tests are played at in the browser. */
export const PREVIEW_SAMPLE_RATE = 16_000;

export interface SynthesisTestOptions {
  voiceId?: string;
  timeoutMs?: number;
  clock?: Clock;
  onUnexpected?: (err: unknown) => void;
}

/**
 * Speaks the test sentence through the stored profile, exactly as a call would, and reports when
 * the first audio came (what a caller feels) and how long the whole took. Failures are answers.
 */
export async function testSynthesisProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  id: string,
  options: SynthesisTestOptions = {},
): Promise<SynthesisProviderTestResult> {
  const row = await store.get(db, projectId, id);
  const voiceId = options.voiceId || PRESET_VOICES[row.vendor][0]?.voiceId || '';
  let apiKey = '';
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let firstAudioMs: number | null = null;
  try {
    apiKey = store.openKey(secret, row);
    const synthesizer = createSynthesizer(
      { ...synthesizerColumns(row), apiKey },
      { timeoutMs: options.timeoutMs, clock: options.clock },
    );
    const pcm = await collectSynthesis(
      (async function* () {
        for await (const chunk of synthesizer.stream(
          SYNTHESIS_TEST_SENTENCE,
          { voiceId, speed: 1, volume: 80 },
          { sampleRate: PREVIEW_SAMPLE_RATE },
        )) {
          firstAudioMs ??= elapsed();
          yield chunk;
        }
      })(),
    );
    const latencyMs = elapsed();
    if (pcm.length === 0) {
      throw new ProviderError(
        'bad_request',
        `${SYNTHESIS_SERVICE.name}没有返回音频，请检查${SYNTHESIS_SERVICE.profile}中的模型与音色（${voiceId}）`,
        undefined,
        SYNTHESIS_SERVICE.id,
      );
    }
    const seconds = (pcm.length / PREVIEW_SAMPLE_RATE).toFixed(1);
    return {
      ok: true,
      latencyMs,
      firstAudioMs,
      audioBase64: encodeWav(pcm, PREVIEW_SAMPLE_RATE).toString('base64'),
      message: `合成成功（音色 ${voiceId}）：首包 ${firstAudioMs ?? latencyMs} ms，共 ${seconds} 秒音频`,
    };
  } catch (err) {
    return {
      ok: false,
      latencyMs: elapsed(),
      firstAudioMs: null,
      audioBase64: '',
      message: testFailureMessage(err, { apiKey, service: SYNTHESIS_SERVICE, ...options }),
    };
  }
}

/** Whether a voice's provider is the offline synthesiser. */
export const isOfflineVoice = (voice: { provider: string }) => voice.provider === OFFLINE_VOICE_PROVIDER;

/** A resolved voice (preset or cloned) spoken whole, as a 16 kHz WAV: the editor's 试听. */
export async function previewVoice(
  resolved: { synthesizer: StreamingSynthesizer; voice: SynthesisVoice },
  text: string,
): Promise<{ audio: Buffer; durationMs: number }> {
  const pcm = await collectSynthesis(
    resolved.synthesizer.stream(text, resolved.voice, { sampleRate: PREVIEW_SAMPLE_RATE }),
  );
  return {
    audio: encodeWav(pcm, PREVIEW_SAMPLE_RATE),
    durationMs: Math.round((pcm.length / PREVIEW_SAMPLE_RATE) * 1000),
  };
}
