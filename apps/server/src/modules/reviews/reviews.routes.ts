import {
  canManageProject,
  envelope,
  errorEnvelope,
  projectIdParams,
  publishReviewDetail,
  publishReviewPage,
  publishReviewSummary,
  REVIEW_REQUIRED_MESSAGE,
  reviewApproveRequest,
  reviewIdParams,
  reviewListQuery,
  reviewRejectRequest,
  reviewSettings,
  reviewSubmitTarget,
} from '@callpilot/contracts';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { forbidden } from '../../lib/errors';
import { ok } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import {
  type Actor,
  approveReview,
  getReview,
  listReviews,
  rejectReview,
  reviewRequired,
  setReviewRequired,
  submitReview,
  withdrawReview,
} from './reviews.service';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route puts a version live (publish, rollback): refused to members while review is on. */
    publishes?: boolean;
  }
}

const guarded = {
  400: errorEnvelope,
  401: errorEnvelope,
  403: errorEnvelope,
  404: errorEnvelope,
  409: errorEnvelope,
};
const BASE = '/api/project/:projectId/reviews';

const actorOf = (req: FastifyRequest): Actor => {
  const user = requireUser(req);
  return { userId: user.id, email: user.email, role: requireProject(req).role, ip: req.ip };
};

/**
 * While the project reviews first, only owners and admins put versions live directly; a member's
 * publish or rollback is refused with the way forward (提交审核). Registered at the root so it
 * sees the assistant and flow routes, which mark themselves with `config.publishes`.
 */
export const publishGuard = fp(
  async (app, { db }: ModuleOptions) => {
    app.addHook('preHandler', async (req) => {
      if (!req.routeOptions.config.publishes) return;
      const project = requireProject(req);
      if (canManageProject(project.role)) return;
      if (await reviewRequired(db, project.id)) throw forbidden(REVIEW_REQUIRED_MESSAGE);
    });
  },
  { name: 'publish-guard', dependencies: ['project-access'] },
);

/** 发布审核: the project's switch, submissions, and owner/admin decisions. */
export const reviewsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['发布审核'];
  const security = [{ bearerAuth: [] }];

  app.get(
    '/api/project/:projectId/review-settings',
    {
      schema: {
        tags,
        security,
        summary: '发布审核开关',
        params: projectIdParams,
        response: { 200: envelope(reviewSettings), ...guarded },
      },
    },
    async (req) => ok({ required: await reviewRequired(db, requireProject(req).id) }),
  );

  app.put(
    '/api/project/:projectId/review-settings',
    {
      schema: {
        tags,
        security,
        summary: '开启或关闭发布审核（所有者或管理员）',
        params: projectIdParams,
        body: reviewSettings,
        response: { 200: envelope(reviewSettings), ...guarded },
      },
    },
    async (req) => ok(await setReviewRequired(db, requireProject(req).id, req.body.required, actorOf(req))),
  );

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '审核列表（最新在前）',
        params: projectIdParams,
        querystring: reviewListQuery,
        response: { 200: envelope(publishReviewPage), ...guarded },
      },
    },
    async (req) => ok(await listReviews(db, requireProject(req).id, req.query)),
  );

  app.post(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '提交审核：冻结小助手或流程的当前草稿，等待批准',
        params: projectIdParams,
        body: reviewSubmitTarget,
        response: { 200: envelope(publishReviewSummary), ...guarded },
      },
    },
    async (req) =>
      ok(
        await submitReview(
          db,
          requireProject(req).id,
          req.body.kind,
          req.body.targetId,
          req.body.note,
          actorOf(req),
        ),
      ),
  );

  app.get(
    `${BASE}/:reviewId`,
    {
      schema: {
        tags,
        security,
        summary: '审核详情：提交内容与线上版本的差异',
        params: reviewIdParams,
        response: { 200: envelope(publishReviewDetail), ...guarded },
      },
    },
    async (req) => ok(await getReview(db, requireProject(req).id, req.params.reviewId)),
  );

  app.post(
    `${BASE}/:reviewId/approve`,
    {
      schema: {
        tags,
        security,
        summary: '批准并发布（所有者或管理员）',
        params: reviewIdParams,
        body: reviewApproveRequest.nullish(),
        response: { 200: envelope(publishReviewSummary), ...guarded },
      },
    },
    async (req) =>
      ok(
        await approveReview(
          db,
          requireProject(req).id,
          req.params.reviewId,
          req.body?.comment ?? '',
          actorOf(req),
        ),
      ),
  );

  app.post(
    `${BASE}/:reviewId/reject`,
    {
      schema: {
        tags,
        security,
        summary: '驳回（所有者或管理员，须填写原因）',
        params: reviewIdParams,
        body: reviewRejectRequest,
        response: { 200: envelope(publishReviewSummary), ...guarded },
      },
    },
    async (req) =>
      ok(await rejectReview(db, requireProject(req).id, req.params.reviewId, req.body.comment, actorOf(req))),
  );

  app.post(
    `${BASE}/:reviewId/withdraw`,
    {
      schema: {
        tags,
        security,
        summary: '撤回自己的提交',
        params: reviewIdParams,
        response: { 200: envelope(publishReviewSummary), ...guarded },
      },
    },
    async (req) => ok(await withdrawReview(db, requireProject(req).id, req.params.reviewId, actorOf(req))),
  );
};
