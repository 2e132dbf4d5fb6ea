import type {
  Paged,
  PageQuery,
  SpeechProvider,
  SpeechProviderTestResult,
  speechProviderWriteRequest,
} from '@callpilot/contracts';
import type { z } from 'zod';
import type { Database } from '../../db/client';
import { speechProviders } from '../../db/schema';
import type { Clock } from '../../engine/clock';
import { RECOGNITION_SERVICE } from '../../engine/speech/openai-transcriber';
import { createRecognizer, type RecognizerProfile } from '../../engine/speech/recognizer';
import type { TelephonyUtterance } from '../../engine/speech/types';
import type { AppSecret } from '../../lib/secret-box';
import {
  keyShown,
  type ProfileKind,
  profileStore,
  quote,
  testFailureMessage,
} from '../provider-profiles/provider-profiles';

type WriteInput = z.output<typeof speechProviderWriteRequest>;
type Row = typeof speechProviders.$inferSelect;

export const SPEECH_PROFILE: ProfileKind = { label: '语音识别配置', configSection: 'hearing' };
const store = profileStore(speechProviders, SPEECH_PROFILE);

function toDto(row: Row): SpeechProvider {
  return {
    id: row.id,
    name: row.name,
    vendor: row.vendor,
    baseUrl: row.baseUrl,
    model: row.model,
    ...keyShown(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const ownColumns = (input: WriteInput) => ({ vendor: input.vendor, model: input.model });

export async function listSpeechProviders(
  db: Database,
  projectId: string,
  page: PageQuery,
): Promise<Paged<SpeechProvider>> {
  const found = await store.list(db, projectId, page);
  return { ...found, items: found.items.map(toDto) };
}

export async function getSpeechProvider(
  db: Database,
  projectId: string,
  id: string,
): Promise<SpeechProvider> {
  return toDto(await store.get(db, projectId, id));
}

export async function createSpeechProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  input: WriteInput,
): Promise<SpeechProvider> {
  return toDto(await store.create(db, secret, projectId, input, ownColumns(input)));
}

/** An omitted or empty apiKey keeps the stored one: the console never has it to send back. */
export async function updateSpeechProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  id: string,
  input: WriteInput,
): Promise<SpeechProvider> {
  return toDto(await store.update(db, secret, projectId, id, input, ownColumns(input)));
}

/** Refused while an assistant's hearing uses it: its calls would silently stop understanding speech. */
export function deleteSpeechProvider(db: Database, projectId: string, id: string): Promise<void> {
  return store.remove(db, projectId, id);
}

/** Whether the project has this profile (an assistant may only name its own project's). */
export async function speechProviderExists(db: Database, projectId: string, id: string): Promise<boolean> {
  return (await store.find(db, projectId, id)) !== undefined;
}

/** The endpoint and decrypted key a call's recogniser needs; null when the profile is gone. */
export async function resolveSpeechProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  id: string,
): Promise<RecognizerProfile | null> {
  const row = await store.find(db, projectId, id);
  if (!row) return null;
  return { vendor: row.vendor, baseUrl: row.baseUrl, model: row.model, apiKey: store.openKey(secret, row) };
}

export interface SpeechTestOptions {
  /** The built-in sample to recognise: "您好", synthesised and brought to 8 kHz. */
  sample: () => Promise<TelephonyUtterance>;
  timeoutMs?: number;
  clock?: Clock;
  onUnexpected?: (err: unknown) => void;
}

/**
 * Recognises the built-in sample through the stored profile, exactly as a call would, and
 * reports what was heard and how long recognition took. Failures are answers, not errors.
 */
export async function testSpeechProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  id: string,
  options: SpeechTestOptions,
): Promise<SpeechProviderTestResult> {
  const row = await store.get(db, projectId, id);
  let apiKey = '';
  let started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const utterance = await options.sample();
    apiKey = store.openKey(secret, row);
    const recognizer = createRecognizer(
      { vendor: row.vendor, baseUrl: row.baseUrl, model: row.model, apiKey },
      { timeoutMs: options.timeoutMs, clock: options.clock },
    );
    started = performance.now();
    const { text } = await recognizer.transcribe(utterance, { language: 'zh' });
    const latencyMs = elapsed();
    return {
      ok: true,
      latencyMs,
      text,
      message: text
        ? `识别成功，样例语音「您好」识别为：「${quote(text)}」`
        : '连接成功，但没有识别出文字（样例为合成语音「您好」），请确认识别模型支持中文',
    };
  } catch (err) {
    return {
      ok: false,
      latencyMs: elapsed(),
      text: '',
      message: testFailureMessage(err, { apiKey, service: RECOGNITION_SERVICE, ...options }),
    };
  }
}
