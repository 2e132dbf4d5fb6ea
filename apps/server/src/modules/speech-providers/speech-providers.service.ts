import {
  type Paged,
  type PageQuery,
  SPEECH_VENDOR_DEFAULTS,
  SPEECH_VENDOR_RULES,
  type SpeechProvider,
  type SpeechProviderTestResult,
  type SpeechVendor,
  type speechProviderWriteRequest,
} from '@callpilot/contracts';
import type { z } from 'zod';
import type { Database } from '../../db/client';
import { speechProviders } from '../../db/schema';
import type { Clock } from '../../engine/clock';
import { RECOGNITION_SERVICE } from '../../engine/speech/openai-transcriber';
import { createRecognizer, type RecognizerProfile } from '../../engine/speech/recognizer';
import { resample } from '../../engine/speech/resample';
import type { TelephonyUtterance } from '../../engine/speech/types';
import { readMono } from '../../engine/speech/wav';
import { AppError } from '../../lib/errors';
import type { AppSecret } from '../../lib/secret-box';
import {
  keyShown,
  type ProfileKind,
  profileStore,
  quote,
  testFailureMessage,
} from '../provider-profiles/provider-profiles';
import { settingsUsing } from '../speech-settings/speech-settings.service';

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
    appId: row.appId,
    keyId: row.keyId,
    ...keyShown(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * The write as stored: empty fields take the vendor's default, and fields the vendor does not use
 * are stored empty, so a profile switched from Tencent to FunASR keeps no stale AppID.
 */
function normalised(input: WriteInput) {
  const rules = SPEECH_VENDOR_RULES[input.vendor];
  const defaults = SPEECH_VENDOR_DEFAULTS[input.vendor];
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

/** Aliyun and Tencent sign with their secret: a profile of theirs without one could never connect. */
function assertSecretKept(vendor: SpeechVendor, keptOrSent: boolean) {
  const required = SPEECH_VENDOR_RULES[vendor].secretRequired;
  if (required && !keptOrSent) {
    throw new AppError(400, 'VALIDATION_FAILED', `字段 apiKey：请输入${required.label}`);
  }
}

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
  assertSecretKept(input.vendor, Boolean(input.apiKey));
  const { write, own } = normalised(input);
  return toDto(await store.create(db, secret, projectId, write, own));
}

/**
 * An omitted or empty apiKey keeps the stored one: the console never has it to send back. Except
 * across a vendor change: one vendor's key is no credential for another, and must not be sent to
 * its server (an OpenAI key as a FunASR proxy's bearer token), so the change drops it.
 */
export async function updateSpeechProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  id: string,
  input: WriteInput,
): Promise<SpeechProvider> {
  const stored = await store.get(db, projectId, id);
  const clearApiKey = input.clearApiKey || (stored.vendor !== input.vendor && !input.apiKey);
  assertSecretKept(input.vendor, Boolean(input.apiKey) || (!clearApiKey && stored.apiKeyEncrypted !== ''));
  const { write, own } = normalised({ ...input, clearApiKey });
  return toDto(await store.update(db, secret, projectId, id, write, own));
}

/**
 * Refused while an assistant's hearing uses it, or while it is the project's primary or fallback
 * recogniser: calls would silently stop understanding speech.
 */
export function deleteSpeechProvider(db: Database, projectId: string, id: string): Promise<void> {
  return store.remove(db, projectId, id, () => settingsUsing(db, projectId, id));
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
  return { ...recognizerColumns(row), apiKey: store.openKey(secret, row) };
}

const recognizerColumns = (row: Row): Omit<RecognizerProfile, 'apiKey'> => ({
  vendor: row.vendor,
  baseUrl: row.baseUrl,
  model: row.model,
  appId: row.appId,
  keyId: row.keyId,
});

/** What to check when the sample was heard as nothing: where each vendor decides the language. */
const SILENT_HINT: Record<SpeechVendor, string> = {
  openai_compatible: '请确认识别模型支持中文',
  funasr: '请确认 FunASR 服务加载的是中文模型',
  aliyun_nls: '请确认 Appkey 所属项目选用的是中文 8000Hz（电话）模型',
  tencent: '请确认识别引擎为中文 8k 引擎（如 8k_zh）',
};

export interface SpeechTestOptions {
  /** The built-in sample to recognise: "您好", synthesised and brought to 8 kHz. */
  sample: () => Promise<TelephonyUtterance>;
  /** A recording the user uploaded (语音配置 › 测试), brought to 8 kHz: recognised instead of the sample. */
  recording?: TelephonyUtterance;
  timeoutMs?: number;
  clock?: Clock;
  onUnexpected?: (err: unknown) => void;
}

/**
 * Recognises the built-in sample (or an uploaded recording) through the stored profile, exactly
 * as a call would, and reports what was heard and how long recognition took. Failures are
 * answers, not errors.
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
    const utterance = options.recording ?? (await options.sample());
    apiKey = store.openKey(secret, row);
    const recognizer = createRecognizer(
      { ...recognizerColumns(row), apiKey },
      { timeoutMs: options.timeoutMs, clock: options.clock },
    );
    started = performance.now();
    const { text } = await recognizer.transcribe(utterance, { language: 'zh' });
    const latencyMs = elapsed();
    return {
      ok: true,
      latencyMs,
      text,
      message: options.recording
        ? text
          ? `识别成功，上传的录音识别为：「${quote(text)}」`
          : `连接成功，但没有从上传的录音中识别出文字，请确认录音中有清晰的普通话；${SILENT_HINT[row.vendor]}`
        : text
          ? `识别成功，样例语音「您好」识别为：「${quote(text)}」`
          : `连接成功，但没有识别出文字（样例为合成语音「您好」），${SILENT_HINT[row.vendor]}`,
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

/** An uploaded test recording may be a minute long: longer than any caller's turn. */
export const MAX_RECORDING_SECONDS = 60;
/** A minute of 48 kHz stereo 16-bit WAV, with room for its header. */
export const MAX_RECORDING_BYTES = 12 * 1024 * 1024;

const recordingProblem = (rule: string) => new AppError(400, 'VALIDATION_FAILED', `字段 file：${rule}`);

/** An uploaded WAV as a phone line would carry it: mono, 8 kHz. 400 naming the rule it breaks. */
export function recordingFromWav(bytes: Buffer, truncated: boolean): TelephonyUtterance {
  if (truncated || bytes.length > MAX_RECORDING_BYTES) {
    throw recordingProblem(`录音文件不能超过 ${MAX_RECORDING_BYTES / 1024 / 1024} MB`);
  }
  let decoded: ReturnType<typeof readMono>;
  try {
    decoded = readMono(bytes);
  } catch {
    throw recordingProblem('仅支持 16 位 PCM 编码的 WAV 录音');
  }
  const { samples, sampleRate } = decoded;
  if (samples.length === 0) throw recordingProblem('录音中没有声音数据');
  if (samples.length / sampleRate > MAX_RECORDING_SECONDS) {
    throw recordingProblem(`录音不能超过 ${MAX_RECORDING_SECONDS} 秒`);
  }
  return { pcm: resample(samples, sampleRate, 8000), sampleRate: 8000 };
}
