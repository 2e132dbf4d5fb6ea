import { randomUUID } from 'node:crypto';
import {
  type AssistantConfig,
  type AssistantDetail,
  type AssistantStatus,
  type AssistantSummary,
  type AssistantUse,
  type AssistantVersion,
  assistantConfig,
  OFFLINE_VOICE_PROVIDER,
  type Paged,
  type PageQuery,
  referencedVariables,
} from '@callpilot/contracts';
import { and, count, desc, eq, ilike, inArray, isNull, or, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Database } from '../../db/client';
import { assistants, assistantVersions, knowledgeBases, llmProviders, users } from '../../db/schema';
import { ESPEAK_VOICES } from '../../engine/speech/espeak';
import { badRequest, notFound } from '../../lib/errors';
import { assertWithinLimit } from '../projects/limits';
import { speechProviderExists } from '../speech-providers/speech-providers.service';
import { synthesisProviderExists } from '../synthesis-providers/synthesis-providers.service';
import { findTemplate } from './assistants.templates';

/** The member who submitted a reviewed version, next to its approver in one query. */
const submitters = alias(users, 'submitters');

/** The draft fields a write sets, after the contract has parsed them. */
export interface AssistantDraft {
  name: string;
  description: string;
  use: AssistantUse;
  status: AssistantStatus;
  config: AssistantConfig;
}

const NAME_MAX = 50;
const COPY_SUFFIX = '（副本）';

/** Rows written before a contract default existed still read as a complete config. */
const readConfig = (stored: unknown): AssistantConfig => assistantConfig.parse(stored ?? {});

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

const summaryColumns = {
  id: assistants.id,
  name: assistants.name,
  description: assistants.description,
  use: assistants.use,
  status: assistants.status,
  config: assistants.config,
  templateKey: assistants.templateKey,
  publishedVersion: assistants.publishedVersion,
  draftRevision: assistants.draftRevision,
  publishedRevision: assistantVersions.draftRevision,
  createdAt: assistants.createdAt,
  updatedAt: assistants.updatedAt,
};

type SummaryRow = {
  id: string;
  name: string;
  description: string;
  use: AssistantUse;
  status: AssistantStatus;
  config: unknown;
  templateKey: string | null;
  publishedVersion: number | null;
  draftRevision: number;
  publishedRevision: number | null;
  createdAt: Date;
  updatedAt: Date;
};

function toSummary(row: SummaryRow): AssistantSummary {
  const config = readConfig(row.config);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    use: row.use,
    status: row.status,
    publishedVersion: row.publishedVersion,
    // Never published counts as unpublished changes: the whole draft is waiting to go live.
    hasUnpublishedChanges: row.publishedVersion === null || row.publishedRevision !== row.draftRevision,
    brainMode: config.brain.providerId ? 'llm' : 'script',
    knowledgeBaseCount: config.knowledge.baseIds.length,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const toDetail = (row: SummaryRow): AssistantDetail => ({
  ...toSummary(row),
  config: readConfig(row.config),
  templateKey: row.templateKey,
});

/** Assistants joined with their live version, so the draft can be compared with it. */
const selectSummaries = (db: Database) =>
  db
    .select(summaryColumns)
    .from(assistants)
    .leftJoin(
      assistantVersions,
      and(
        eq(assistantVersions.assistantId, assistants.id),
        eq(assistantVersions.version, assistants.publishedVersion),
      ),
    );

const liveAssistant = (projectId: string, assistantId: string) =>
  and(eq(assistants.projectId, projectId), eq(assistants.id, assistantId), isNull(assistants.deletedAt));

export async function listAssistants(
  db: Database,
  projectId: string,
  query: PageQuery & { keyword?: string; use?: AssistantUse; status?: AssistantStatus },
): Promise<Paged<AssistantSummary>> {
  const keyword = query.keyword?.trim();
  const pattern = keyword ? `%${escapeLike(keyword)}%` : undefined;
  const where = and(
    eq(assistants.projectId, projectId),
    isNull(assistants.deletedAt),
    pattern ? or(ilike(assistants.name, pattern), ilike(assistants.description, pattern)) : undefined,
    query.use ? eq(assistants.use, query.use) : undefined,
    query.status ? eq(assistants.status, query.status) : undefined,
  );
  const [total] = await db.select({ n: count() }).from(assistants).where(where);
  const rows = await selectSummaries(db)
    .where(where)
    .orderBy(desc(assistants.updatedAt), desc(assistants.id))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return { items: rows.map(toSummary), total: total?.n ?? 0, page: query.page, pageSize: query.pageSize };
}

export async function getAssistant(
  db: Database,
  projectId: string,
  assistantId: string,
): Promise<AssistantDetail> {
  const [row] = await selectSummaries(db).where(liveAssistant(projectId, assistantId)).limit(1);
  if (!row) throw notFound('小助手不存在或已删除');
  return toDetail(row);
}

/**
 * References the contract cannot check: model, speech-recognition and speech-synthesis profiles and
 * knowledge bases must belong to this project, or one tenant could run on another's paid endpoint
 * or read its documents.
 */
async function assertReferencesBelong(db: Database, projectId: string, config: AssistantConfig) {
  if (config.voice.provider === OFFLINE_VOICE_PROVIDER) {
    if (!ESPEAK_VOICES.some((voice) => voice.voiceId === config.voice.voiceId)) {
      throw badRequest('字段 config.voice.voiceId：音色不存在');
    }
  } else if (!(await synthesisProviderExists(db, projectId, config.voice.provider))) {
    // A profile voice's id is the vendor's (or a clone's) to judge; its profile must be ours.
    throw badRequest('字段 config.voice.provider：音色所属的语音合成配置不存在或不属于本项目');
  }
  const providerId = config.brain.providerId;
  if (providerId) {
    const [provider] = await db
      .select({ id: llmProviders.id })
      .from(llmProviders)
      .where(and(eq(llmProviders.projectId, projectId), eq(llmProviders.id, providerId)))
      .limit(1);
    if (!provider) throw badRequest('字段 config.brain.providerId：模型配置不存在或不属于本项目');
  }
  const hearingId = config.hearing.providerId;
  if (hearingId && !(await speechProviderExists(db, projectId, hearingId))) {
    throw badRequest('字段 config.hearing.providerId：语音识别配置不存在或不属于本项目');
  }
  const baseIds = [...new Set(config.knowledge.baseIds)];
  if (baseIds.length > 0) {
    const found = await db
      .select({ id: knowledgeBases.id })
      .from(knowledgeBases)
      .where(and(eq(knowledgeBases.projectId, projectId), inArray(knowledgeBases.id, baseIds)));
    const missing = baseIds.filter((id) => !found.some((row) => row.id === id));
    if (missing.length > 0) {
      throw badRequest(`字段 config.knowledge.baseIds：知识库不存在或不属于本项目（${missing.join('、')}）`);
    }
  }
  if (baseIds.length !== config.knowledge.baseIds.length) {
    throw badRequest('字段 config.knowledge.baseIds：同一个知识库不能重复关联');
  }
}

/** What publishing demands beyond a savable draft: a call must be able to start and make sense. */
export function publishProblems(config: AssistantConfig): string[] {
  const problems: string[] = [];
  if (!config.openingLine.trim()) problems.push('字段 config.openingLine：发布前请填写开场白');
  const declared = new Set(config.variables.map((variable) => variable.name));
  const referenced = [
    ...new Set([...referencedVariables(config.systemPrompt), ...referencedVariables(config.openingLine)]),
  ];
  const missing = referenced.filter((name) => !declared.has(name));
  if (missing.length > 0) {
    problems.push(`字段 config.variables：提示词或开场白引用了未声明的变量：${missing.join('、')}`);
  }
  return problems;
}

async function countAssistants(db: Database, projectId: string) {
  const [row] = await db
    .select({ n: count() })
    .from(assistants)
    .where(and(eq(assistants.projectId, projectId), isNull(assistants.deletedAt)));
  return row?.n ?? 0;
}

/**
 * Which parts of a create request the caller really sent: with a template, the template fills
 * everything else (the contract's defaults would otherwise overwrite it).
 */
export interface ProvidedFields {
  description: boolean;
  use: boolean;
  status: boolean;
  /** Top-level keys of `config` the caller sent. */
  configKeys: string[];
}

export function mergeWithTemplate(
  templateKey: string,
  draft: AssistantDraft,
  provided: ProvidedFields,
): AssistantDraft {
  const template = findTemplate(templateKey);
  if (!template) throw badRequest('字段 templateKey：模板不存在');
  const config: Record<string, unknown> = { ...template.config };
  for (const key of provided.configKeys) {
    if (key in draft.config) config[key] = draft.config[key as keyof AssistantConfig];
  }
  return {
    name: draft.name,
    description: provided.description ? draft.description : template.description,
    use: provided.use ? draft.use : template.use,
    status: draft.status,
    config: assistantConfig.parse(config),
  };
}

export async function createAssistant(
  db: Database,
  projectId: string,
  userId: string | null,
  draft: AssistantDraft,
  templateKey: string | null = null,
): Promise<AssistantDetail> {
  await assertReferencesBelong(db, projectId, draft.config);
  await assertWithinLimit(db, projectId, 'assistant', await countAssistants(db, projectId));
  const id = randomUUID();
  await db.insert(assistants).values({
    id,
    projectId,
    name: draft.name,
    description: draft.description,
    use: draft.use,
    status: draft.status,
    config: draft.config,
    templateKey,
    createdBy: userId,
  });
  return getAssistant(db, projectId, id);
}

/** Draft saves are lenient about content (a half-written prompt is fine); publishing is strict. */
export async function updateAssistant(
  db: Database,
  projectId: string,
  assistantId: string,
  draft: AssistantDraft,
): Promise<AssistantDetail> {
  await getAssistant(db, projectId, assistantId);
  await assertReferencesBelong(db, projectId, draft.config);
  await db
    .update(assistants)
    .set({
      name: draft.name,
      description: draft.description,
      use: draft.use,
      status: draft.status,
      config: draft.config,
      draftRevision: sql`${assistants.draftRevision} + 1`,
      updatedAt: new Date(),
    })
    .where(liveAssistant(projectId, assistantId));
  return getAssistant(db, projectId, assistantId);
}

/** Soft delete: call records and tasks keep pointing at the versions they ran. */
export async function deleteAssistant(db: Database, projectId: string, assistantId: string): Promise<void> {
  const deleted = await db
    .update(assistants)
    .set({ deletedAt: new Date() })
    .where(liveAssistant(projectId, assistantId))
    .returning({ id: assistants.id });
  if (deleted.length === 0) throw notFound('小助手不存在或已删除');
}

export async function copyAssistant(
  db: Database,
  projectId: string,
  assistantId: string,
  userId: string | null,
): Promise<AssistantDetail> {
  const source = await getAssistant(db, projectId, assistantId);
  const name = `${source.name.slice(0, NAME_MAX - COPY_SUFFIX.length)}${COPY_SUFFIX}`;
  return createAssistant(
    db,
    projectId,
    userId,
    { name, description: source.description, use: source.use, status: source.status, config: source.config },
    source.templateKey,
  );
}

/** Freezes the current draft as the next version, which calls and tasks then run. */
export async function publishAssistant(
  db: Database,
  projectId: string,
  assistantId: string,
  userId: string | null,
  note: string,
): Promise<AssistantDetail> {
  const current = await getAssistant(db, projectId, assistantId);
  const problems = publishProblems(current.config);
  if (problems.length > 0) throw badRequest(problems.join('；'));
  await assertReferencesBelong(db, projectId, current.config);
  await freezeDraft(db, projectId, assistantId, userId, note);
  return getAssistant(db, projectId, assistantId);
}

/** What 发布审核 freezes at submission and publishes on approval. */
export interface AssistantSnapshot {
  name: string;
  use: AssistantUse;
  config: AssistantConfig;
}

/** Checks a snapshot as publishing checks the draft (rules, and that what it names is still there). */
export async function checkAssistantSnapshot(db: Database, projectId: string, snapshot: AssistantSnapshot) {
  const problems = publishProblems(snapshot.config);
  if (problems.length > 0) throw badRequest(problems.join('；'));
  await assertReferencesBelong(db, projectId, snapshot.config);
}

/** The live version's content, the left side of a review's diff; null before the first publish. */
export async function liveAssistantSnapshot(
  db: Database,
  projectId: string,
  assistantId: string,
): Promise<{ version: number; snapshot: AssistantSnapshot } | null> {
  const live = await getPublishedVersion(db, projectId, assistantId);
  return live
    ? { version: live.version, snapshot: { name: live.name, use: live.use, config: live.config } }
    : null;
}

/**
 * Approving a review: publishes the snapshot as submitted (the draft may have moved on since and
 * stays as it is). Runs inside the caller's transaction.
 */
export async function publishAssistantSnapshot(
  tx: Database,
  projectId: string,
  assistantId: string,
  snapshot: AssistantSnapshot,
  review: { approvedBy: string; submittedBy: string | null; reviewId: string; note: string },
): Promise<number> {
  await checkAssistantSnapshot(tx, projectId, snapshot);
  return freezeDraft(tx, projectId, assistantId, review.approvedBy, review.note, {
    snapshot,
    submittedBy: review.submittedBy,
    reviewId: review.reviewId,
  });
}

async function freezeDraft(
  db: Database,
  projectId: string,
  assistantId: string,
  userId: string | null,
  note: string,
  reviewed?: { snapshot: AssistantSnapshot; submittedBy: string | null; reviewId: string },
): Promise<number> {
  return db.transaction(async (tx) => {
    // The row lock serialises two publishes of one assistant, so version numbers never collide.
    const [row] = await tx
      .select()
      .from(assistants)
      .where(liveAssistant(projectId, assistantId))
      .for('update');
    if (!row) throw notFound('小助手不存在或已删除');
    const [latest] = await tx
      .select({ max: sql<number | null>`max(${assistantVersions.version})` })
      .from(assistantVersions)
      .where(eq(assistantVersions.assistantId, assistantId));
    const version = (latest?.max ?? 0) + 1;
    await tx.insert(assistantVersions).values({
      assistantId,
      version,
      projectId,
      name: reviewed?.snapshot.name ?? row.name,
      use: reviewed?.snapshot.use ?? row.use,
      config: reviewed?.snapshot.config ?? row.config,
      draftRevision: row.draftRevision,
      note,
      publishedBy: userId,
      submittedBy: reviewed?.submittedBy ?? null,
      reviewId: reviewed?.reviewId ?? null,
    });
    await tx
      .update(assistants)
      .set({ publishedVersion: version, updatedAt: new Date() })
      .where(eq(assistants.id, assistantId));
    return version;
  });
}

export async function listVersions(
  db: Database,
  projectId: string,
  assistantId: string,
): Promise<AssistantVersion[]> {
  await getAssistant(db, projectId, assistantId);
  const rows = await db
    .select({
      version: assistantVersions.version,
      note: assistantVersions.note,
      name: assistantVersions.name,
      use: assistantVersions.use,
      config: assistantVersions.config,
      publishedAt: assistantVersions.publishedAt,
      publishedBy: users.displayName,
      submittedBy: submitters.displayName,
    })
    .from(assistantVersions)
    .leftJoin(users, eq(users.id, assistantVersions.publishedBy))
    .leftJoin(submitters, eq(submitters.id, assistantVersions.submittedBy))
    .where(and(eq(assistantVersions.projectId, projectId), eq(assistantVersions.assistantId, assistantId)))
    .orderBy(desc(assistantVersions.version));
  return rows.map((row) => ({
    ...row,
    config: readConfig(row.config),
    publishedAt: row.publishedAt.toISOString(),
    publishedBy: row.publishedBy ?? '已删除的用户',
  }));
}

/** Restores a version into the draft and publishes it at once, so what runs is what was chosen. */
export async function rollbackAssistant(
  db: Database,
  projectId: string,
  assistantId: string,
  version: number,
  userId: string | null,
): Promise<AssistantDetail> {
  await getAssistant(db, projectId, assistantId);
  const [target] = await db
    .select()
    .from(assistantVersions)
    .where(and(eq(assistantVersions.assistantId, assistantId), eq(assistantVersions.version, version)))
    .limit(1);
  if (!target) throw notFound(`版本 v${version} 不存在`);
  await db
    .update(assistants)
    .set({
      name: target.name,
      use: target.use,
      config: target.config,
      draftRevision: sql`${assistants.draftRevision} + 1`,
      updatedAt: new Date(),
    })
    .where(liveAssistant(projectId, assistantId));
  await freezeDraft(db, projectId, assistantId, userId, `回滚至 v${version}`);
  return getAssistant(db, projectId, assistantId);
}

export interface PublishedAssistant {
  assistantId: string;
  version: number;
  name: string;
  use: AssistantUse;
  status: AssistantStatus;
  config: AssistantConfig;
}

/**
 * For the call engine and tasks: the frozen config a call runs on (the live version unless one is
 * named), or null when the assistant was never published, is deleted, or has no such version.
 */
export async function getPublishedVersion(
  db: Database,
  projectId: string,
  assistantId: string,
  version?: number,
): Promise<PublishedAssistant | null> {
  const [row] = await db
    .select({
      assistantId: assistants.id,
      status: assistants.status,
      publishedVersion: assistants.publishedVersion,
    })
    .from(assistants)
    .where(liveAssistant(projectId, assistantId))
    .limit(1);
  const wanted = version ?? row?.publishedVersion;
  if (!row || !wanted) return null;
  const [frozen] = await db
    .select()
    .from(assistantVersions)
    .where(and(eq(assistantVersions.assistantId, assistantId), eq(assistantVersions.version, wanted)))
    .limit(1);
  if (!frozen) return null;
  return {
    assistantId,
    version: frozen.version,
    name: frozen.name,
    use: frozen.use,
    status: row.status,
    config: readConfig(frozen.config),
  };
}
