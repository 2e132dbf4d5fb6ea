import {
  envelope,
  errorEnvelope,
  projectIdParams,
  smsFollowUpRule,
  smsFollowUpRuleListQuery,
  smsFollowUpRuleWriteRequest,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import {
  createFollowUpRule,
  deleteFollowUpRule,
  listFollowUpRules,
  updateFollowUpRule,
} from './sms-rules.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const ruleParams = projectIdParams.extend({ ruleId: z.string().min(1).max(64) });

/** 跟进短信 of an assistant or a task (the assistant edit page and the task page show them). */
export const smsRulesRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['短信管理'];
  const security = [{ bearerAuth: [] }];
  const base = '/api/project/:projectId/sms/follow-up-rules';

  app.get(
    base,
    {
      schema: {
        tags,
        security,
        summary: '助手或任务的跟进短信规则',
        params: projectIdParams,
        querystring: smsFollowUpRuleListQuery,
        response: { 200: envelope(z.array(smsFollowUpRule)), ...guarded },
      },
    },
    async (req) => ok(await listFollowUpRules(db, requireProject(req).id, req.query)),
  );
  app.post(
    base,
    {
      schema: {
        tags,
        security,
        summary: '新建跟进短信规则（每个模板变量须选择取值来源）',
        params: projectIdParams,
        body: smsFollowUpRuleWriteRequest,
        response: { 200: envelope(smsFollowUpRule), ...guarded },
      },
    },
    async (req) => ok(await createFollowUpRule(db, requireProject(req).id, req.body)),
  );
  app.put(
    `${base}/:ruleId`,
    {
      schema: {
        tags,
        security,
        summary: '修改跟进短信规则',
        params: ruleParams,
        body: smsFollowUpRuleWriteRequest,
        response: { 200: envelope(smsFollowUpRule), ...guarded },
      },
    },
    async (req) => ok(await updateFollowUpRule(db, requireProject(req).id, req.params.ruleId, req.body)),
  );
  app.delete(
    `${base}/:ruleId`,
    {
      schema: {
        tags,
        security,
        summary: '删除跟进短信规则',
        params: ruleParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      await deleteFollowUpRule(db, requireProject(req).id, req.params.ruleId);
      return ok(null);
    },
  );
};
