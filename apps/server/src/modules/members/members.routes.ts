import {
  envelope,
  errorEnvelope,
  invitationAccepted,
  invitationLink,
  invitationParams,
  invitationPreview,
  invitationTokenParams,
  inviteMemberRequest,
  memberParams,
  projectIdParams,
  projectInvitation,
  updateMemberRoleRequest,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import { requireProject } from '../../plugins/project-access';
import { auditActor } from '../audit/audit.service';
import { publicBaseUrl } from '../auth/auth.routes';
import { revokedUser } from '../auth/session-cache';
import type { ModuleOptions } from '../module-options';
import {
  acceptInvitation,
  changeMemberRole,
  inviteMember,
  listInvitations,
  previewInvitation,
  removeMember,
  renewInvitationLink,
  revokeInvitation,
} from './members.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };

/** Who acts, for audit entries: the project routes' checked user. */
const actorOf = (req: Parameters<typeof auditActor>[0]) => {
  const a = auditActor(req);
  return { userId: a.userId ?? '', actor: a.actor, ip: a.ip };
};

export const membersRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  const tags = ['成员'];
  const security = [{ bearerAuth: [] }];
  // The console reads the project list (and roles) from a per-user cache in every process.
  const refreshProjectsOf = (userId: string) => app.revokeSessions(revokedUser(userId));

  app.get(
    '/api/project/:projectId/invitations',
    {
      schema: {
        tags,
        security,
        summary: '待接受的成员邀请',
        params: projectIdParams,
        response: { 200: envelope(z.array(projectInvitation)), ...guarded },
      },
    },
    async (req) => ok(await listInvitations(db, requireProject(req).id)),
  );

  app.post(
    '/api/project/:projectId/invitations',
    {
      schema: {
        tags,
        security,
        summary: '按邮箱邀请成员（链接 7 天内有效，仅可使用一次）',
        params: projectIdParams,
        body: inviteMemberRequest,
        response: { 200: envelope(invitationLink), ...guarded, 503: errorEnvelope },
      },
    },
    async (req) =>
      ok(
        await inviteMember(db, app.providers, requireProject(req), actorOf(req), {
          ...req.body,
          baseUrl: publicBaseUrl(req, env.PUBLIC_URL),
        }),
      ),
  );

  app.post(
    '/api/project/:projectId/invitations/:invitationId/link',
    {
      schema: {
        tags,
        security,
        summary: '为待接受的邀请生成新链接（原链接失效，有效期重新计算）',
        params: invitationParams,
        response: { 200: envelope(invitationLink), ...guarded },
      },
    },
    async (req) =>
      ok(
        await renewInvitationLink(
          db,
          requireProject(req),
          req.params.invitationId,
          publicBaseUrl(req, env.PUBLIC_URL),
        ),
      ),
  );

  app.delete(
    '/api/project/:projectId/invitations/:invitationId',
    {
      schema: {
        tags,
        security,
        summary: '撤销邀请',
        params: invitationParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      await revokeInvitation(db, requireProject(req), actorOf(req), req.params.invitationId);
      return ok(null);
    },
  );

  app.put(
    '/api/project/:projectId/members/:userId',
    {
      schema: {
        tags,
        security,
        summary: '修改成员角色',
        params: memberParams,
        body: updateMemberRoleRequest,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      await changeMemberRole(db, requireProject(req), actorOf(req), req.params.userId, req.body.role);
      await refreshProjectsOf(req.params.userId);
      return ok(null);
    },
  );

  app.delete(
    '/api/project/:projectId/members/:userId',
    {
      schema: {
        tags,
        security,
        summary: '移除成员',
        params: memberParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      await removeMember(db, requireProject(req), actorOf(req), req.params.userId);
      await refreshProjectsOf(req.params.userId);
      return ok(null);
    },
  );

  app.delete(
    '/api/project/:projectId/membership',
    {
      schema: {
        tags,
        security,
        summary: '退出项目（最后一名所有者不能退出）',
        params: projectIdParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
      // Leaving changes only the caller's own membership, which a read-only member may give up.
      config: { readOnlySafe: true },
    },
    async (req) => {
      const user = requireUser(req);
      await removeMember(db, requireProject(req), actorOf(req), user.id, true);
      await refreshProjectsOf(user.id);
      return ok(null);
    },
  );

  // Outside /api/project/: the visitor is not a member yet. The token is the credential.
  app.get(
    '/api/invitations/:token',
    {
      schema: {
        tags,
        summary: '邀请详情（项目、角色、有效期、状态）',
        params: invitationTokenParams,
        response: { 200: envelope(invitationPreview), 400: errorEnvelope, 404: errorEnvelope },
      },
    },
    async (req) => ok(await previewInvitation(db, req.params.token)),
  );

  app.post(
    '/api/invitations/:token/accept',
    {
      schema: {
        tags,
        security,
        summary: '接受邀请（当前账号的邮箱须与受邀邮箱一致）',
        params: invitationTokenParams,
        response: { 200: envelope(invitationAccepted), ...guarded },
      },
      onRequest: app.authenticate,
    },
    async (req) => {
      const user = requireUser(req);
      const joined = await acceptInvitation(db, user, req.params.token, req.ip);
      await refreshProjectsOf(user.id);
      return ok(joined);
    },
  );
};
