import { z } from 'zod';
import { entityId, optionalText, paged, pageQuery, requiredText } from './common';

/** 发布审核: what can be submitted, and the states a submission goes through. */
export const reviewKind = z.enum(['assistant', 'flow'], { error: '审核对象须为 assistant 或 flow' });
export type ReviewKind = z.infer<typeof reviewKind>;
export const reviewStatus = z.enum(['pending', 'approved', 'rejected', 'withdrawn'], {
  error: '审核状态须为 pending、approved、rejected 或 withdrawn',
});
export type ReviewStatus = z.infer<typeof reviewStatus>;

export const REVIEW_KIND_LABELS: Record<ReviewKind, string> = { assistant: '智能小助手', flow: '通话流程' };
export const REVIEW_STATUS_LABELS: Record<ReviewStatus, string> = {
  pending: '待审核',
  approved: '已通过',
  rejected: '已驳回',
  withdrawn: '已撤回',
};

/** What a member sees when publishing is refused because the project reviews first. */
export const REVIEW_REQUIRED_MESSAGE = '项目已开启发布审核：请提交审核，由所有者或管理员批准后发布';

export const reviewSettings = z.object({ required: z.boolean({ error: '是否开启审核须为布尔值' }) }).meta({
  id: 'ReviewSettings',
});
export type ReviewSettings = z.infer<typeof reviewSettings>;

export const reviewSubmitRequest = z
  .object({ note: optionalText('提交说明', 200).default('') })
  .meta({ id: 'ReviewSubmitRequest' });
export type ReviewSubmitRequest = z.infer<typeof reviewSubmitRequest>;

export const reviewApproveRequest = z
  .object({ comment: optionalText('审核意见', 500).default('') })
  .meta({ id: 'ReviewApproveRequest' });
export const reviewRejectRequest = z
  .object({ comment: requiredText('驳回原因', 500) })
  .meta({ id: 'ReviewRejectRequest' });

export const reviewListQuery = pageQuery.extend({
  status: reviewStatus.optional(),
  kind: reviewKind.optional(),
  targetId: entityId('审核对象 ID').optional(),
});

export const reviewSubmitTarget = reviewSubmitRequest
  .extend({ kind: reviewKind, targetId: entityId('审核对象 ID') })
  .meta({ id: 'ReviewSubmitTarget' });
export type ReviewListQuery = z.infer<typeof reviewListQuery>;

export const reviewIdParams = z.object({ projectId: entityId('项目 ID'), reviewId: entityId('审核 ID') });

export const publishReviewSummary = z
  .object({
    id: z.string(),
    kind: reviewKind,
    targetId: z.string(),
    targetName: z.string(),
    status: reviewStatus,
    note: z.string(),
    submittedBy: z.string().nullable(),
    submittedById: z.string().nullable(),
    submittedAt: z.iso.datetime(),
    decidedBy: z.string().nullable(),
    decidedAt: z.iso.datetime().nullable(),
    comment: z.string(),
    baseVersion: z.number().int().nullable(),
    publishedVersion: z.number().int().nullable(),
  })
  .meta({ id: 'PublishReviewSummary' });
export type PublishReviewSummary = z.infer<typeof publishReviewSummary>;
export const publishReviewPage = paged(publishReviewSummary).meta({ id: 'PublishReviewPage' });

/** One changed leaf between the live version and the submission; values are JSON. */
export const reviewChange = z.object({
  path: z.string(),
  /** Chinese name of the field where known, else the path. */
  label: z.string(),
  kind: z.enum(['added', 'removed', 'changed']),
  before: z.unknown(),
  after: z.unknown(),
});
export type ReviewChange = z.infer<typeof reviewChange>;

export const publishReviewDetail = publishReviewSummary
  .extend({
    changes: z.array(reviewChange),
    /** The live version now (may have moved since the submission). */
    liveVersion: z.number().int().nullable(),
  })
  .meta({ id: 'PublishReviewDetail' });
export type PublishReviewDetail = z.infer<typeof publishReviewDetail>;
