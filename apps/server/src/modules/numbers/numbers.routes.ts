import {
  entityId,
  envelope,
  errorEnvelope,
  optionalText,
  projectIdParams,
  projectNumber,
  projectNumberInboundRequest,
  projectNumberWriteRequest,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import {
  assertCanManageNumbers,
  bindInbound,
  createNumber,
  deleteNumber,
  listNumbers,
  updateNumber,
} from './numbers.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const numberParams = projectIdParams.extend({ number: z.string().min(1).max(30) });
const numberUpdateRequest = z.object({
  label: optionalText('备注', 50).optional(),
  enabled: z.boolean({ error: '是否启用须为布尔值' }).optional(),
  /** Absent: keep; null: the simulated carrier (模拟线路). */
  trunkId: entityId('线路').nullable().optional(),
  /** 休息: tasks stop calling from it (inbound calls still answered); false puts it back to work. */
  resting: z.boolean({ error: '是否休息须为布尔值' }).optional(),
});

/** 外显号码: the project's caller numbers. */
export const numbersRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, runtime }) => {
  const tags = ['外显号码'];
  const security = [{ bearerAuth: [] }];
  const url = '/api/project/:projectId/numbers';

  app.get(
    url,
    {
      schema: {
        tags,
        security,
        summary: '外显号码列表',
        params: projectIdParams,
        response: { 200: envelope(z.array(projectNumber)), ...guarded },
      },
    },
    async (req) => ok(await listNumbers(db, requireProject(req).id)),
  );

  app.post(
    url,
    {
      config: { audit: { action: 'number.changed', targetType: 'number', verb: '新增' } },
      schema: {
        tags,
        security,
        summary: '添加外显号码（所有者或管理员；号码按中国大陆格式规范化；trunkId 为空时走模拟线路）',
        params: projectIdParams,
        body: projectNumberWriteRequest,
        response: { 200: envelope(projectNumber), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManageNumbers(project);
      return ok(await createNumber(db, project.id, req.body));
    },
  );

  app.put(
    `${url}/:number`,
    {
      config: {
        audit: { action: 'number.changed', targetType: 'number', targetParam: 'number', verb: '修改' },
      },
      schema: {
        tags,
        security,
        summary:
          '修改外显号码的备注、启用状态、线路或休息状态（休息中的号码不用于呼出任务，仍接听呼入；所有者或管理员）',
        params: numberParams,
        body: numberUpdateRequest,
        response: { 200: envelope(projectNumber), ...guarded },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManageNumbers(project);
      return ok(await updateNumber(db, project.id, req.params.number, req.body, runtime.clock.now()));
    },
  );

  app.put(
    `${url}/:number/inbound`,
    {
      config: {
        audit: {
          action: 'number.changed',
          targetType: 'number',
          targetParam: 'number',
          verb: '修改来电接待',
        },
      },
      schema: {
        tags,
        security,
        summary:
          '呼入接听：把号码的来电交给小助手或通话流程（其已发布版本接听，二者选一），都为 null 时解除绑定（所有者或管理员）',
        params: numberParams,
        body: projectNumberInboundRequest,
        response: { 200: envelope(projectNumber), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManageNumbers(project);
      return ok(await bindInbound(db, project.id, req.params.number, req.body));
    },
  );

  app.delete(
    `${url}/:number`,
    {
      config: {
        audit: { action: 'number.changed', targetType: 'number', targetParam: 'number', verb: '删除' },
      },
      schema: {
        tags,
        security,
        summary: '删除外显号码（所有者或管理员；未结束任务正在使用时不可删除）',
        params: numberParams,
        response: { 200: envelope(z.null()), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManageNumbers(project);
      await deleteNumber(db, project.id, req.params.number);
      return ok(null);
    },
  );
};
