import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  analyzeVoiceSample,
  CLONED_VOICE_PREFIX,
  type CloneVendor,
  type Paged,
  type PageQuery,
  SYNTHESIS_VENDOR_DEFAULTS,
  VOICE_SAMPLE_RULES,
  type VoiceClone,
  type VoiceOption,
  voiceCloneCreateFields,
} from '@callpilot/contracts';
import { and, asc, count, eq, isNull, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import {
  assistants,
  assistantVersions,
  speechSettings,
  synthesisProviders,
  voiceClones,
} from '../../db/schema';
import { ProviderError } from '../../engine/brain/openai-client';
import {
  createDashScopeVoiceEnrollment,
  dashScopeHttpBase,
} from '../../engine/speech/dashscope-voice-enrollment';
import type { VendorCloneStatus } from '../../engine/speech/voice-clone';
import { createVolcengineVoiceClone } from '../../engine/speech/volcengine-voice-clone';
import { readMono } from '../../engine/speech/wav';
import { AppError, conflict, notFound } from '../../lib/errors';
import { type AppSecret, decryptSecret, SecretBoxError } from '../../lib/secret-box';
import { type ProjectAccess, requireManager } from '../../plugins/project-access';
import { assertWithinLimit } from '../projects/limits';
import { parseSampleFile, sampleUrl, verifySample } from './sample-url';

/**
 * 声音复刻: a project's voices cloned from a sample through its CosyVoice (DashScope) or
 * Volcengine synthesis profile. The vendor's voice id stays in this module and the call path
 * (`resolveClonedVoice`); the console and assistants only ever see `clone:<our id>`.
 */

type Row = typeof voiceClones.$inferSelect;
type ProfileRow = typeof synthesisProviders.$inferSelect;

export interface VoiceCloneContext {
  secret: AppSecret;
  /** DATA_DIR: samples wait under voice-samples/ until the vendor has them. */
  dataDir: string;
  /** PUBLIC_BASE_URL: where DashScope downloads the sample from. */
  publicBaseUrl: string | undefined;
  now?: () => number;
  /** Vendor calls made in passing (status refreshes) that failed, for the log. */
  onRefreshError?: (err: unknown) => void;
}

/** A training clone is asked about at most this often, however often the console polls. */
export const STATUS_REFRESH_MS = 5_000;

const LABEL = '复刻音色';
const missing = () => notFound(`${LABEL}不存在`);
const invalid = (field: string, message: string) =>
  new AppError(400, 'VALIDATION_FAILED', `字段 ${field}：${message}`);

/** Cloning costs money at the vendor and fills a paid slot: owners and admins only. */
export function assertCanClone(project: ProjectAccess): void {
  requireManager(project, '仅项目所有者或管理员可以复刻或删除声音');
}

function toDto(row: Row): VoiceClone {
  return {
    id: row.id,
    name: row.name,
    providerId: row.providerId,
    vendor: row.vendor,
    status: row.status,
    failureReason: row.failureReason,
    sampleDurationMs: row.sampleDurationMs,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const samplePath = (ctx: VoiceCloneContext, projectId: string, cloneId: string) =>
  path.join(ctx.dataDir, 'voice-samples', projectId, `${cloneId}.wav`);

async function removeSample(ctx: VoiceCloneContext, projectId: string, cloneId: string) {
  await fs.rm(samplePath(ctx, projectId, cloneId), { force: true });
}

function openKey(ctx: VoiceCloneContext, profile: ProfileRow): string {
  if (!profile.apiKeyEncrypted) return '';
  try {
    return decryptSecret(ctx.secret, profile.apiKeyEncrypted);
  } catch (err) {
    if (!(err instanceof SecretBoxError)) throw err;
    throw conflict(
      `语音合成配置「${profile.name}」的密钥无法解密（服务器密钥已更换），请在语音配置中重新填写`,
    );
  }
}

/** The vendor's enrolment calls for a profile, keyed by what the clone row knows. */
function vendorOf(ctx: VoiceCloneContext, profile: ProfileRow) {
  const key = openKey(ctx, profile);
  if (profile.vendor === 'cosyvoice') {
    const enrollment = createDashScopeVoiceEnrollment({
      apiKey: key,
      baseUrl: dashScopeHttpBase(profile.baseUrl || SYNTHESIS_VENDOR_DEFAULTS.cosyvoice.baseUrl),
    });
    return {
      kind: 'cosyvoice' as const,
      status: (vendorVoiceId: string) => enrollment.queryVoice(vendorVoiceId),
      remove: (vendorVoiceId: string) => enrollment.deleteVoice(vendorVoiceId),
      enrollment,
    };
  }
  const clone = createVolcengineVoiceClone({ appId: profile.appId, token: key, baseUrl: profile.baseUrl });
  return {
    kind: 'volcengine' as const,
    status: (vendorVoiceId: string) => clone.status(vendorVoiceId),
    // A Volcengine slot is bought in its console and stays the account's: there is nothing to delete.
    remove: async () => {},
    clone,
  };
}

async function findProfile(db: Database, projectId: string, id: string): Promise<ProfileRow | undefined> {
  const [row] = await db
    .select()
    .from(synthesisProviders)
    .where(and(eq(synthesisProviders.projectId, projectId), eq(synthesisProviders.id, id)))
    .limit(1);
  return row;
}

async function findClone(db: Database, projectId: string, id: string): Promise<Row | undefined> {
  const [row] = await db
    .select()
    .from(voiceClones)
    .where(and(eq(voiceClones.projectId, projectId), eq(voiceClones.id, id)))
    .limit(1);
  return row;
}

/**
 * Asks the vendor where a training clone stands, at most every STATUS_REFRESH_MS. A vendor that
 * cannot be reached leaves the clone training (the console keeps polling); its answer is stored.
 */
async function refreshed(db: Database, ctx: VoiceCloneContext, row: Row): Promise<Row> {
  const now = ctx.now?.() ?? Date.now();
  if (row.status !== 'training' || !row.vendorVoiceId) return row;
  if (row.checkedAt && now - row.checkedAt.getTime() < STATUS_REFRESH_MS) return row;
  const profile = await findProfile(db, row.projectId, row.providerId);
  let status: VendorCloneStatus | null = null;
  if (profile) {
    try {
      status = await vendorOf(ctx, profile).status(row.vendorVoiceId);
    } catch (err) {
      ctx.onRefreshError?.(err);
    }
  }
  const next = status && status.state !== 'training' ? status : null;
  const [updated] = await db
    .update(voiceClones)
    .set({
      checkedAt: new Date(now),
      ...(next ? { status: next.state, failureReason: next.reason, updatedAt: new Date(now) } : {}),
    })
    .where(and(eq(voiceClones.id, row.id), eq(voiceClones.status, 'training')))
    .returning();
  // The vendor has the sample (or has refused it): the public URL has nothing left to serve.
  if (next) await removeSample(ctx, row.projectId, row.id);
  return updated ?? row;
}

export async function listVoiceClones(
  db: Database,
  ctx: VoiceCloneContext,
  projectId: string,
  { page, pageSize }: PageQuery,
): Promise<Paged<VoiceClone>> {
  const where = eq(voiceClones.projectId, projectId);
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(voiceClones)
      .where(where)
      .orderBy(asc(voiceClones.createdAt), asc(voiceClones.id))
      .limit(pageSize)
      .offset((page - 1) * pageSize),
    db.select({ n: count() }).from(voiceClones).where(where),
  ]);
  const items: VoiceClone[] = [];
  // The console polls the list while a clone trains; each row is throttled on its own.
  for (const row of rows) items.push(toDto(await refreshed(db, ctx, row)));
  return { items, total: total?.n ?? 0, page, pageSize };
}

export async function getVoiceClone(
  db: Database,
  ctx: VoiceCloneContext,
  projectId: string,
  id: string,
): Promise<VoiceClone> {
  const row = await findClone(db, projectId, id);
  if (!row) throw missing();
  return toDto(await refreshed(db, ctx, row));
}

export interface VoiceCloneUpload {
  fields: Record<string, string>;
  /** The sample file, or undefined when none came. */
  sample: { bytes: Buffer; fileName: string; truncated: boolean } | undefined;
}

/** The sample as the vendor will get it, decoded and checked with the browser's own rules. */
function checkedSample(sample: VoiceCloneUpload['sample']): { bytes: Buffer; durationMs: number } {
  if (!sample || sample.bytes.length === 0) throw invalid('sample', '请上传 10～20 秒的录音（WAV）');
  if (sample.truncated || sample.bytes.length > VOICE_SAMPLE_RULES.maxBytes) {
    throw invalid('sample', `录音文件不能超过 ${VOICE_SAMPLE_RULES.maxBytes / 1024 / 1024} MB`);
  }
  let decoded: { samples: Int16Array; sampleRate: number };
  try {
    decoded = readMono(sample.bytes);
  } catch (err) {
    const bits = /(\d+)-bit/.exec((err as Error).message)?.[1];
    throw invalid(
      'sample',
      bits
        ? `只支持 16 位 PCM 的 WAV 录音（该文件为 ${bits} 位）`
        : '不是有效的 WAV 文件，请上传 WAV 格式的录音',
    );
  }
  const floats = new Float32Array(decoded.samples.length);
  for (let i = 0; i < floats.length; i++) floats[i] = (decoded.samples[i] as number) / 32768;
  const analysis = analyzeVoiceSample(floats, decoded.sampleRate);
  if (analysis.problems.length) {
    throw invalid('sample', analysis.problems.map((problem) => problem.message).join('；'));
  }
  return { bytes: sample.bytes, durationMs: analysis.durationMs };
}

/** DashScope prefixes: lowercase letters and digits, at most 10; derived from our id. */
const prefixFor = (cloneId: string) => `cp${cloneId.replace(/[^0-9a-f]/g, '').slice(0, 8)}`;

/**
 * Enrols a sample with the profile's vendor. The row is written first (status training, no vendor
 * id yet) so the clone's slot is taken and DashScope's download of the signed URL finds it; a
 * vendor refusal removes it again and answers with the vendor's reason.
 */
export async function createVoiceClone(
  db: Database,
  ctx: VoiceCloneContext,
  project: ProjectAccess,
  upload: VoiceCloneUpload,
): Promise<VoiceClone> {
  assertCanClone(project);
  const projectId = project.id;
  const [existing] = await db
    .select({ n: count() })
    .from(voiceClones)
    .where(eq(voiceClones.projectId, projectId));
  await assertWithinLimit(db, projectId, 'ttsClone', existing?.n ?? 0);

  const parsed = voiceCloneCreateFields.safeParse(upload.fields);
  if (!parsed.success) {
    throw new AppError(
      400,
      'VALIDATION_FAILED',
      parsed.error.issues.map((issue) => `字段 ${issue.path.join('.')}：${issue.message}`).join('；'),
    );
  }
  const fields = parsed.data;
  const profile = await findProfile(db, projectId, fields.providerId);
  if (!profile) throw invalid('providerId', '语音合成配置不存在，请刷新后重新选择');
  if (profile.vendor !== 'cosyvoice' && profile.vendor !== 'volcengine') {
    throw invalid('providerId', '该语音合成配置不支持声音复刻，请选择阿里云百炼 CosyVoice 或火山引擎的配置');
  }
  const vendor: CloneVendor = profile.vendor;
  if (vendor === 'volcengine') {
    if (!fields.speakerId) {
      throw invalid('speakerId', '请填写火山引擎控制台中购买的音色 ID（S_ 开头）');
    }
    const [taken] = await db
      .select({ name: voiceClones.name })
      .from(voiceClones)
      .where(
        and(
          eq(voiceClones.projectId, projectId),
          eq(voiceClones.providerId, profile.id),
          eq(voiceClones.vendorVoiceId, fields.speakerId),
        ),
      )
      .limit(1);
    if (taken)
      throw invalid('speakerId', `该音色 ID 已被复刻音色「${taken.name}」使用，请先删除它或换一个音色 ID`);
  } else if (!ctx.publicBaseUrl) {
    throw conflict(
      '服务器未配置公网地址（PUBLIC_BASE_URL），阿里云百炼无法下载录音，暂不能用 CosyVoice 复刻声音：请联系管理员配置',
    );
  }
  const sample = checkedSample(upload.sample);

  const id = randomUUID();
  const now = ctx.now?.() ?? Date.now();
  await db.insert(voiceClones).values({
    id,
    projectId,
    providerId: profile.id,
    vendor,
    name: fields.name,
    vendorVoiceId: '',
    status: 'training',
    sampleDurationMs: sample.durationMs,
    checkedAt: new Date(now),
  });
  try {
    let vendorVoiceId: string;
    const enrol = vendorOf(ctx, profile);
    if (enrol.kind === 'cosyvoice') {
      const file = samplePath(ctx, projectId, id);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, sample.bytes);
      const model = profile.model || SYNTHESIS_VENDOR_DEFAULTS.cosyvoice.model;
      vendorVoiceId = await enrol.enrollment.createVoice({
        targetModel: model,
        prefix: prefixFor(id),
        url: sampleUrl(ctx.secret, ctx.publicBaseUrl as string, projectId, id, now),
      });
    } else {
      await enrol.clone.upload({ speakerId: fields.speakerId, audio: sample.bytes, format: 'wav' });
      vendorVoiceId = fields.speakerId;
    }
    const [row] = await db
      .update(voiceClones)
      .set({ vendorVoiceId, updatedAt: new Date() })
      .where(eq(voiceClones.id, id))
      .returning();
    return toDto(row as Row);
  } catch (err) {
    await db.delete(voiceClones).where(eq(voiceClones.id, id));
    await removeSample(ctx, projectId, id);
    throw err;
  }
}

/** Names of live assistants whose draft or published voice, or whose project fallback, is this clone. */
async function usersOf(db: Database, projectId: string, voiceId: string): Promise<string[]> {
  const rows = await db
    .select({ name: assistants.name })
    .from(assistants)
    .leftJoin(
      assistantVersions,
      and(
        eq(assistantVersions.assistantId, assistants.id),
        eq(assistantVersions.version, assistants.publishedVersion),
      ),
    )
    .where(
      and(
        eq(assistants.projectId, projectId),
        isNull(assistants.deletedAt),
        or(
          sql`${assistants.config}->'voice'->>'voiceId' = ${voiceId}`,
          sql`${assistantVersions.config}->'voice'->>'voiceId' = ${voiceId}`,
        ),
      ),
    )
    .orderBy(asc(assistants.name))
    .limit(4);
  const names = rows.map((r) => `小助手「${r.name}」`);
  const [fallback] = await db
    .select({ projectId: speechSettings.projectId })
    .from(speechSettings)
    .where(
      and(
        eq(speechSettings.projectId, projectId),
        sql`${speechSettings.settings}->'synthesisFallback'->>'voiceId' = ${voiceId}`,
      ),
    )
    .limit(1);
  if (fallback) names.push('语音配置中的备用音色');
  return names;
}

/**
 * Deletes the clone here and at the vendor (DashScope frees its slot; a Volcengine slot stays
 * the account's). Refused while an assistant speaks with it. A vendor that no longer knows the
 * voice is no obstacle; one that cannot be reached is, so no paid slot is silently left behind.
 */
export async function deleteVoiceClone(
  db: Database,
  ctx: VoiceCloneContext,
  project: ProjectAccess,
  id: string,
): Promise<void> {
  assertCanClone(project);
  const row = await findClone(db, project.id, id);
  if (!row) throw missing();
  const users = await usersOf(db, project.id, `${CLONED_VOICE_PREFIX}${row.id}`);
  if (users.length) {
    const more = users.length > 3 ? '等' : '';
    throw conflict(`该${LABEL}正被${users.slice(0, 3).join('、')}${more}使用，请先改用其他音色后再删除`);
  }
  const profile = await findProfile(db, project.id, row.providerId);
  if (profile && row.vendorVoiceId) {
    try {
      await vendorOf(ctx, profile).remove(row.vendorVoiceId);
    } catch (err) {
      const gone = err instanceof ProviderError && err.kind === 'bad_request';
      if (!gone) throw err;
    }
  }
  await db.delete(voiceClones).where(and(eq(voiceClones.projectId, project.id), eq(voiceClones.id, id)));
  await removeSample(ctx, project.id, id);
}

/**
 * For the call path: the synthesis profile and vendor voice id behind an assistant's
 * `clone:<id>` voice, only within the clone's own project and only once it is ready. A Volcengine
 * clone (trained with the 2.0 effect) is spoken on cluster volcano_icl whatever the profile's
 * cluster for preset voices is.
 */
export async function resolveClonedVoice(
  db: Database,
  projectId: string,
  voiceId: string,
): Promise<{ profileId: string; vendorVoiceId: string; vendor: CloneVendor } | null> {
  if (!voiceId.startsWith(CLONED_VOICE_PREFIX)) return null;
  const row = await findClone(db, projectId, voiceId.slice(CLONED_VOICE_PREFIX.length));
  if (row?.status !== 'ready' || !row.vendorVoiceId) return null;
  return { profileId: row.providerId, vendorVoiceId: row.vendorVoiceId, vendor: row.vendor };
}

/** The project's usable clones for the voice picker, provider = their synthesis profile. */
export async function listReadyCloneOptions(
  db: Database,
  projectId: string,
): Promise<(Omit<VoiceOption, 'provider'> & { provider: string })[]> {
  const rows = await db
    .select({ id: voiceClones.id, name: voiceClones.name, providerId: voiceClones.providerId })
    .from(voiceClones)
    .where(and(eq(voiceClones.projectId, projectId), eq(voiceClones.status, 'ready')))
    .orderBy(asc(voiceClones.createdAt), asc(voiceClones.id));
  return rows.map((row) => ({
    provider: row.providerId,
    voiceId: `${CLONED_VOICE_PREFIX}${row.id}`,
    name: `${row.name}（复刻）`,
    language: 'zh-CN',
  }));
}

/**
 * The sample behind a signed public URL, for the vendor's download: only while its clone is
 * training (afterwards the file is gone anyway). Anything else is the same 404.
 */
export async function readPublicSample(db: Database, ctx: VoiceCloneContext, file: string): Promise<Buffer> {
  const gone = () => notFound('录音地址无效或已过期');
  const parsed = parseSampleFile(file);
  if (!parsed) throw gone();
  const [row] = await db.select().from(voiceClones).where(eq(voiceClones.id, parsed.cloneId)).limit(1);
  if (row?.status !== 'training') throw gone();
  if (!verifySample(ctx.secret, row.projectId, parsed, ctx.now?.() ?? Date.now())) throw gone();
  try {
    return await fs.readFile(samplePath(ctx, row.projectId, row.id));
  } catch {
    throw gone();
  }
}
