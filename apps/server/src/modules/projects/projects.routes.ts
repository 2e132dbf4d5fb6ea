import {
  balanceLimit,
  envelope,
  errorEnvelope,
  projectBalance,
  projectIdParams,
  projectMember,
  projectRegisterRequest,
  projectSummary,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import { requireProject } from '../../plugins/project-access';
import { revokedUser } from '../auth/session-cache';
import type { ModuleOptions } from '../module-options';
import { createProject, getBalance, getBalanceLimit, listMembers } from './projects.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope };

export const projectsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['项目'];
  const security = [{ bearerAuth: [] }];
  // Authentication runs at onRequest, so an anonymous caller gets 401 before any validation message.

  app.put(
    '/api/project/register',
    {
      schema: {
        tags,
        security,
        summary: '登记项目（注册后的第二步），当前用户成为所有者',
        body: projectRegisterRequest,
        response: { 200: envelope(projectSummary), 400: errorEnvelope, 401: errorEnvelope },
      },
      onRequest: app.authenticate,
    },
    async (req) => {
      const userId = requireUser(req).id;
      const project = await createProject(db, userId, req.body);
      // The user's cached project list (in every process) must now include it.
      await app.revokeSessions(revokedUser(userId));
      return ok(project);
    },
  );

  // The console loads balance and limits before anything else, so a disabled project must
  // still answer these two: the console then shows its "contact sales" dialog.
  app.get(
    '/api/project/:projectId/balance-limit',
    {
      schema: {
        tags,
        security,
        summary: '项目的功能额度',
        params: projectIdParams,
        response: { 200: envelope(balanceLimit), ...guarded },
      },
      config: { allowDisabledProject: true },
    },
    async (req) => ok(await getBalanceLimit(db, requireProject(req).id)),
  );

  app.post(
    '/api/project/:projectId/balance',
    {
      schema: {
        tags,
        security,
        summary: '项目余额（单位：分）',
        params: projectIdParams,
        response: { 200: envelope(projectBalance), ...guarded },
      },
      config: { allowDisabledProject: true, readOnlySafe: true },
    },
    async (req) => ok(await getBalance(db, requireProject(req).id)),
  );

  app.get(
    '/api/project/:projectId/members',
    {
      schema: {
        tags,
        security,
        summary: '项目成员与角色',
        params: projectIdParams,
        response: { 200: envelope(z.array(projectMember)), ...guarded },
      },
    },
    async (req) => ok(await listMembers(db, requireProject(req).id)),
  );
};
