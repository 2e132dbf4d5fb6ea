import { randomUUID } from 'node:crypto';
import type { FlowGraph } from '@callpilot/contracts';
import {
  canManageProject,
  type Paged,
  type ProjectRole,
  type PublishReviewDetail,
  type PublishReviewSummary,
  type ReviewKind,
  type ReviewListQuery,
} from '@callpilot/contracts';
import { and, count, desc, eq, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Database } from '../../db/client';
import { projects, publishReviews, users } from '../../db/schema';
import { conflict, forbidden, notFound } from '../../lib/errors';
import {
  type AssistantSnapshot,
  checkAssistantSnapshot,
  getAssistant,
  liveAssistantSnapshot,
  publishAssistantSnapshot,
} from '../assistants/assistants.service';
import { recordAudit } from '../audit/audit.service';
import { liveFlowVersion, publishFlowSnapshot, snapshotFlowDraft } from '../flows/flows.service';
import { diffSnapshots } from './review-diff';

export interface Actor {
  userId: string;
  email: string;
  role: ProjectRole;
  ip: string;
}

const decider = alias(users, 'decider');

export async function reviewRequired(db: Database, projectId: string): Promise<boolean> {
  const [row] = await db
    .select({ required: projects.reviewRequired })
    .from(projects)
    .where(eq(projects.id, projectId))
    .limit(1);
  return row?.required ?? false;
}

/** Who did it, for the audit entries of reviews: the member, from where, in which project. */
const byActor = (projectId: string, actor: Actor) => ({
  projectId,
  userId: actor.userId,
  actor: actor.email,
  ip: actor.ip,
});

export async function setReviewRequired(db: Database, projectId: string, required: boolean, actor: Actor) {
  if (!canManageProject(actor.role)) throw forbidden('仅项目所有者或管理员可以设置发布审核');
  await db.transaction(async (tx) => {
    await tx.update(projects).set({ reviewRequired: required }).where(eq(projects.id, projectId));
    await recordAudit(tx, {
      ...byActor(projectId, actor),
      action: 'project.settings_changed',
      targetType: 'project',
      targetId: projectId,
      summary: required ? '开启发布审核' : '关闭发布审核',
    });
  });
  return { required };
}

/** Freezes the target's draft now, checked as publishing would check it. */
async function snapshotOf(db: Database, projectId: string, kind: ReviewKind, targetId: string) {
  if (kind === 'assistant') {
    const current = await getAssistant(db, projectId, targetId);
    const snapshot: AssistantSnapshot = { name: current.name, use: current.use, config: current.config };
    await checkAssistantSnapshot(db, projectId, snapshot);
    return { name: current.name, snapshot, baseVersion: current.publishedVersion };
  }
  const { name, graph } = await snapshotFlowDraft(db, projectId, targetId);
  const live = await liveFlowVersion(db, projectId, targetId);
  return { name, snapshot: { graph }, baseVersion: live?.version ?? null };
}

/**
 * A member asks to publish. A newer submission for the same target replaces a pending one
 * (marked 已撤回), so the reviewer only ever sees the latest.
 */
export async function submitReview(
  db: Database,
  projectId: string,
  kind: ReviewKind,
  targetId: string,
  note: string,
  actor: Actor,
): Promise<PublishReviewSummary> {
  const frozen = await snapshotOf(db, projectId, kind, targetId);
  if (!(await reviewRequired(db, projectId))) throw conflict('项目未开启发布审核，可直接发布');
  const id = randomUUID();
  await db.transaction(async (tx) => {
    await tx
      .update(publishReviews)
      .set({ status: 'withdrawn', decidedAt: new Date(), comment: '已被新的提交取代' })
      .where(
        and(
          eq(publishReviews.projectId, projectId),
          eq(publishReviews.kind, kind),
          eq(publishReviews.targetId, targetId),
          eq(publishReviews.status, 'pending'),
        ),
      );
    await tx.insert(publishReviews).values({
      id,
      projectId,
      kind,
      targetId,
      targetName: frozen.name,
      status: 'pending',
      snapshot: frozen.snapshot,
      baseVersion: frozen.baseVersion,
      note,
      submittedBy: actor.userId,
    });
    await recordAudit(tx, {
      ...byActor(projectId, actor),
      action: 'review.submitted',
      targetType: kind,
      targetId,
      summary: frozen.name,
      detail: { reviewId: id, note },
    });
  });
  return getReviewSummary(db, projectId, id);
}

const summaryColumns = {
  id: publishReviews.id,
  kind: publishReviews.kind,
  targetId: publishReviews.targetId,
  targetName: publishReviews.targetName,
  status: publishReviews.status,
  note: publishReviews.note,
  submittedBy: users.displayName,
  submittedById: publishReviews.submittedBy,
  submittedAt: publishReviews.submittedAt,
  decidedBy: decider.displayName,
  decidedAt: publishReviews.decidedAt,
  comment: publishReviews.comment,
  baseVersion: publishReviews.baseVersion,
  publishedVersion: publishReviews.publishedVersion,
  snapshot: publishReviews.snapshot,
};

type Row = {
  [K in keyof typeof summaryColumns]: (typeof summaryColumns)[K]['_']['notNull'] extends true
    ? (typeof summaryColumns)[K]['_']['data']
    : (typeof summaryColumns)[K]['_']['data'] | null;
};

const toSummary = ({ snapshot: _snapshot, ...row }: Row): PublishReviewSummary => ({
  ...row,
  submittedAt: row.submittedAt.toISOString(),
  decidedAt: row.decidedAt?.toISOString() ?? null,
});

const selectReviews = (db: Database, where: SQL | undefined) =>
  db
    .select(summaryColumns)
    .from(publishReviews)
    .leftJoin(users, eq(users.id, publishReviews.submittedBy))
    .leftJoin(decider, eq(decider.id, publishReviews.decidedBy))
    .where(where);

async function findReview(db: Database, projectId: string, reviewId: string): Promise<Row> {
  const [row] = await selectReviews(
    db,
    and(eq(publishReviews.projectId, projectId), eq(publishReviews.id, reviewId)),
  ).limit(1);
  if (!row) throw notFound('审核记录不存在');
  return row as Row;
}

export const getReviewSummary = async (db: Database, projectId: string, reviewId: string) =>
  toSummary(await findReview(db, projectId, reviewId));

export async function listReviews(
  db: Database,
  projectId: string,
  query: ReviewListQuery,
): Promise<Paged<PublishReviewSummary>> {
  const where = and(
    eq(publishReviews.projectId, projectId),
    query.status ? eq(publishReviews.status, query.status) : undefined,
    query.kind ? eq(publishReviews.kind, query.kind) : undefined,
    query.targetId ? eq(publishReviews.targetId, query.targetId) : undefined,
  );
  const [total] = await db.select({ n: count() }).from(publishReviews).where(where);
  const rows = await selectReviews(db, where)
    .orderBy(desc(publishReviews.submittedAt))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return {
    items: (rows as Row[]).map(toSummary),
    total: total?.n ?? 0,
    page: query.page,
    pageSize: query.pageSize,
  };
}

async function liveOf(db: Database, projectId: string, kind: ReviewKind, targetId: string) {
  if (kind === 'assistant') {
    const live = await liveAssistantSnapshot(db, projectId, targetId);
    return live ? { version: live.version, content: live.snapshot as unknown } : null;
  }
  const live = await liveFlowVersion(db, projectId, targetId);
  return live ? { version: live.version, content: live.graph as unknown } : null;
}

/** What the diff compares: an assistant's name, use and config; a flow's graph. */
const comparable = (kind: ReviewKind, snapshot: unknown) =>
  kind === 'flow' ? (snapshot as { graph: unknown }).graph : snapshot;

/** The submission against what is live now: that is what approving would change. */
export async function getReview(
  db: Database,
  projectId: string,
  reviewId: string,
): Promise<PublishReviewDetail> {
  const row = await findReview(db, projectId, reviewId);
  let live: Awaited<ReturnType<typeof liveOf>> = null;
  try {
    live = await liveOf(db, projectId, row.kind, row.targetId);
  } catch (error) {
    // The target was deleted since: the submission can still be read, just not approved.
    if (!(error instanceof Error && 'statusCode' in error && error.statusCode === 404)) throw error;
  }
  return {
    ...toSummary(row),
    liveVersion: live?.version ?? null,
    changes: diffSnapshots(live?.content ?? null, comparable(row.kind, row.snapshot)),
  };
}

function assertDecider(actor: Actor) {
  if (!canManageProject(actor.role)) throw forbidden('仅项目所有者或管理员可以审核发布');
}

async function lockPending(tx: Database, projectId: string, reviewId: string) {
  const [row] = await tx
    .select()
    .from(publishReviews)
    .where(and(eq(publishReviews.projectId, projectId), eq(publishReviews.id, reviewId)))
    .for('update');
  if (!row) throw notFound('审核记录不存在');
  if (row.status !== 'pending') throw conflict('该提交已处理，不能重复审核');
  return row;
}

/** Publishes the submission as it was submitted and records who approved it. */
export async function approveReview(
  db: Database,
  projectId: string,
  reviewId: string,
  comment: string,
  actor: Actor,
): Promise<PublishReviewSummary> {
  assertDecider(actor);
  await db.transaction(async (tx) => {
    const row = await lockPending(tx, projectId, reviewId);
    const review = {
      approvedBy: actor.userId,
      submittedBy: row.submittedBy,
      reviewId,
      note: row.note || `审核通过（${row.targetName}）`,
    };
    const version =
      row.kind === 'assistant'
        ? await publishAssistantSnapshot(
            tx,
            projectId,
            row.targetId,
            row.snapshot as AssistantSnapshot,
            review,
          )
        : await publishFlowSnapshot(
            tx,
            projectId,
            row.targetId,
            (row.snapshot as { graph: FlowGraph }).graph,
            review,
          );
    await tx
      .update(publishReviews)
      .set({
        status: 'approved',
        decidedBy: actor.userId,
        decidedAt: new Date(),
        comment,
        publishedVersion: version,
      })
      .where(eq(publishReviews.id, reviewId));
    await recordAudit(tx, {
      ...byActor(projectId, actor),
      action: 'review.approved',
      targetType: row.kind,
      targetId: row.targetId,
      summary: `${row.targetName} v${version}`,
      detail: { reviewId, version, comment },
    });
  });
  return getReviewSummary(db, projectId, reviewId);
}

export async function rejectReview(
  db: Database,
  projectId: string,
  reviewId: string,
  comment: string,
  actor: Actor,
): Promise<PublishReviewSummary> {
  assertDecider(actor);
  await db.transaction(async (tx) => {
    const row = await lockPending(tx, projectId, reviewId);
    await tx
      .update(publishReviews)
      .set({ status: 'rejected', decidedBy: actor.userId, decidedAt: new Date(), comment })
      .where(eq(publishReviews.id, reviewId));
    await recordAudit(tx, {
      ...byActor(projectId, actor),
      action: 'review.rejected',
      targetType: row.kind,
      targetId: row.targetId,
      summary: row.targetName,
      detail: { reviewId, comment },
    });
  });
  return getReviewSummary(db, projectId, reviewId);
}

/** The submitter takes their own pending submission back. */
export async function withdrawReview(db: Database, projectId: string, reviewId: string, actor: Actor) {
  await db.transaction(async (tx) => {
    const row = await lockPending(tx, projectId, reviewId);
    if (row.submittedBy !== actor.userId && !canManageProject(actor.role))
      throw forbidden('只能撤回自己提交的审核');
    await tx
      .update(publishReviews)
      .set({ status: 'withdrawn', decidedBy: actor.userId, decidedAt: new Date() })
      .where(eq(publishReviews.id, reviewId));
  });
  return getReviewSummary(db, projectId, reviewId);
}

/** The pending submission of one target, so its editor can say 审核中. */
export async function pendingReviewOf(db: Database, projectId: string, kind: ReviewKind, targetId: string) {
  const [row] = await selectReviews(
    db,
    and(
      eq(publishReviews.projectId, projectId),
      eq(publishReviews.kind, kind),
      eq(publishReviews.targetId, targetId),
      eq(publishReviews.status, 'pending'),
    ),
  ).limit(1);
  return row ? toSummary(row as Row) : null;
}
