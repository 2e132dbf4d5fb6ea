import { OFFLINE_VOICE_PROVIDER, type SpeechSettings, speechSettings } from '@callpilot/contracts';
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { speechSettings as settingsTable, speechProviders, synthesisProviders } from '../../db/schema';
import { ESPEAK_VOICES } from '../../engine/speech/espeak';
import { badRequest } from '../../lib/errors';

/**
 * A project's speech defaults (语音配置): the recogniser of assistants that pick none, the
 * recogniser and voice that take over when an assistant's own fail or are too slow, and how long
 * "too slow" is. One row per project that changed them; absent rows read as the contract's defaults.
 */

export const DEFAULT_SPEECH_SETTINGS: SpeechSettings = speechSettings.parse({});

export async function getSpeechSettings(db: Database, projectId: string): Promise<SpeechSettings> {
  const [row] = await db
    .select({ settings: settingsTable.settings })
    .from(settingsTable)
    .where(eq(settingsTable.projectId, projectId))
    .limit(1);
  if (!row) return DEFAULT_SPEECH_SETTINGS;
  // Written through the contract; a row from an older shape keeps what still parses.
  const parsed = speechSettings.safeParse(row.settings);
  return parsed.success ? parsed.data : DEFAULT_SPEECH_SETTINGS;
}

const profileOf = async (
  db: Database,
  table: typeof speechProviders | typeof synthesisProviders,
  projectId: string,
  id: string,
) =>
  (
    await db
      .select({ id: table.id })
      .from(table)
      .where(and(eq(table.projectId, projectId), eq(table.id, id)))
      .limit(1)
  ).length > 0;

/**
 * The ids the contract cannot check: each must be a profile of this project, of the right kind
 * (a synthesis profile cannot listen), or one project could run on another's paid endpoint.
 */
async function assertReferencesBelong(db: Database, projectId: string, settings: SpeechSettings) {
  const { recognitionPrimaryId, recognitionFallbackId, synthesisFallback } = settings;
  if (recognitionPrimaryId && !(await profileOf(db, speechProviders, projectId, recognitionPrimaryId))) {
    throw badRequest('字段 recognitionPrimaryId：主识别配置不存在或不属于本项目，请选择本项目的语音识别配置');
  }
  if (recognitionFallbackId) {
    if (!recognitionPrimaryId) {
      throw badRequest('字段 recognitionFallbackId：请先选择主识别配置，备用识别配置在主识别失败时接替');
    }
    if (recognitionFallbackId === recognitionPrimaryId) {
      throw badRequest('字段 recognitionFallbackId：备用识别配置不能与主识别配置相同');
    }
    if (!(await profileOf(db, speechProviders, projectId, recognitionFallbackId))) {
      throw badRequest(
        '字段 recognitionFallbackId：备用识别配置不存在或不属于本项目，请选择本项目的语音识别配置',
      );
    }
  }
  if (synthesisFallback.provider === OFFLINE_VOICE_PROVIDER) {
    if (!ESPEAK_VOICES.some((voice) => voice.voiceId === synthesisFallback.voiceId)) {
      throw badRequest('字段 synthesisFallback.voiceId：音色不存在');
    }
  } else if (!(await profileOf(db, synthesisProviders, projectId, synthesisFallback.provider))) {
    throw badRequest('字段 synthesisFallback.provider：备用音色所属的语音合成配置不存在或不属于本项目');
  }
}

export async function saveSpeechSettings(
  db: Database,
  projectId: string,
  settings: SpeechSettings,
): Promise<SpeechSettings> {
  await assertReferencesBelong(db, projectId, settings);
  await db
    .insert(settingsTable)
    .values({ projectId, settings, updatedAt: new Date() })
    .onConflictDoUpdate({ target: settingsTable.projectId, set: { settings, updatedAt: new Date() } });
  return settings;
}

/**
 * Why the settings stop a profile from being deleted (null when they do not name it): calls
 * would lose their default recogniser, their fallback, or the voice that speaks when all else fails.
 */
export async function settingsUsing(
  db: Database,
  projectId: string,
  profileId: string,
): Promise<string | null> {
  const [row] = await db
    .select({ settings: settingsTable.settings })
    .from(settingsTable)
    .where(
      and(
        eq(settingsTable.projectId, projectId),
        sql`(${settingsTable.settings}->>'recognitionPrimaryId' = ${profileId}
          or ${settingsTable.settings}->>'recognitionFallbackId' = ${profileId}
          or ${settingsTable.settings}->'synthesisFallback'->>'provider' = ${profileId})`,
      ),
    )
    .limit(1);
  if (!row) return null;
  const settings = row.settings as Partial<SpeechSettings>;
  if (settings.recognitionPrimaryId === profileId) {
    return '该语音识别配置是本项目的主识别配置，请先在语音配置中改选其他主识别配置后再删除';
  }
  if (settings.recognitionFallbackId === profileId) {
    return '该语音识别配置是本项目的备用识别配置，请先在语音配置中改选其他备用识别配置后再删除';
  }
  return '该语音合成配置提供了本项目的备用音色，请先在语音配置中改选其他备用音色后再删除';
}
