import {
  dashboardSummary,
  envelope,
  errorEnvelope,
  projectIdParams,
  taskAction,
  taskContactList,
  taskContactListQuery,
  taskDetail,
  taskIdParams,
  taskList,
  taskListQuery,
  taskPreflight,
  taskSettings,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { streamEvents } from '../../lib/sse';
import { requireProject } from '../../plugins/project-access';
import { taskActionAudit } from '../audit/audit-trail.plugin';
import type { ModuleOptions } from '../module-options';
import { dashboard } from '../reports/dashboard';
import {
  actOnTask,
  copyTask,
  createTask,
  deleteTask,
  getTaskDetail,
  listContacts,
  listTasks,
  preflightTask,
  updateTask,
} from './tasks.service';

const guarded = {
  400: errorEnvelope,
  401: errorEnvelope,
  403: errorEnvelope,
  404: errorEnvelope,
  409: errorEnvelope,
};
const BASE = '/api/project/:projectId/tasks';

/** Call tasks (呼出任务): settings, state machine, contacts, preflight, live events. */
export const tasksRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, runtime }) => {
  const tags = ['呼出任务'];
  const security = [{ bearerAuth: [] }];
  const now = () => runtime.clock.now();
  /** After a state change over HTTP: dial now rather than at the next tick, and tell the watchers. */
  const changed = (projectId: string, taskId: string) => runtime.taskChanged(projectId, taskId);

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '呼出任务列表（服务端分页；按名称、状态、小助手、创建时间筛选）',
        params: projectIdParams,
        querystring: taskListQuery,
        response: { 200: envelope(taskList), ...guarded },
      },
    },
    async (req) => ok(await listTasks(db, requireProject(req).id, req.query, now())),
  );

  app.post(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '新建呼出任务（草稿）',
        params: projectIdParams,
        body: taskSettings,
        response: { 200: envelope(taskDetail), ...guarded },
      },
    },
    async (req) => ok(await createTask(db, requireProject(req).id, req.user?.id ?? null, req.body, now())),
  );

  app.get(
    `${BASE}/events`,
    {
      schema: {
        tags,
        security,
        summary: '任务实时事件（SSE：任务计数变化时推送，每个任务每秒至多一次）',
        description:
          '每个事件一行 `data: <TaskEvent json>`；每 15 秒一行 `: ping` 保持连接。可用 taskId 只跟随一个任务。',
        params: projectIdParams,
        querystring: z.object({ taskId: z.string().max(64).optional() }),
        response: guarded,
      },
    },
    async (req, reply) => {
      const projectId = requireProject(req).id;
      streamEvents(
        reply,
        (send) => runtime.taskEvents.subscribe(projectId, send, req.query.taskId),
        (end) => runtime.onStop(end),
      );
    },
  );

  app.get(
    `${BASE}/:taskId`,
    {
      schema: {
        tags,
        security,
        summary: '任务详情（计数、接通率、并发、预计剩余时间、设置）',
        params: taskIdParams,
        response: { 200: envelope(taskDetail), ...guarded },
      },
    },
    async (req) => ok(await getTaskDetail(db, requireProject(req).id, req.params.taskId, now())),
  );

  app.put(
    `${BASE}/:taskId`,
    {
      schema: {
        tags,
        security,
        summary: '修改任务设置（仅草稿、待开始、已暂停）',
        params: taskIdParams,
        body: taskSettings,
        response: { 200: envelope(taskDetail), ...guarded },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const detail = await updateTask(db, projectId, req.params.taskId, req.body, now());
      changed(projectId, detail.id);
      return ok(detail);
    },
  );

  app.delete(
    `${BASE}/:taskId`,
    {
      schema: {
        tags,
        security,
        summary: '删除任务（仅草稿）',
        params: taskIdParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      await deleteTask(db, requireProject(req).id, req.params.taskId, now());
      return ok(null);
    },
  );

  app.post(
    `${BASE}/:taskId/copy`,
    {
      schema: {
        tags,
        security,
        summary: '复制任务（新草稿“<名称> 副本”，含联系人，状态重置）',
        params: taskIdParams,
        response: { 200: envelope(taskDetail), ...guarded },
      },
    },
    async (req) =>
      ok(await copyTask(db, requireProject(req).id, req.params.taskId, req.user?.id ?? null, now())),
  );

  app.get(
    `${BASE}/:taskId/preflight`,
    {
      schema: {
        tags,
        security,
        summary: '开始前检查：最多呼叫次数、预计时长、余额与并发',
        params: taskIdParams,
        response: { 200: envelope(taskPreflight), ...guarded },
      },
    },
    async (req) => ok(await preflightTask(db, requireProject(req).id, req.params.taskId, now())),
  );

  app.post(
    `${BASE}/:taskId/actions/:action`,
    {
      config: { audit: taskActionAudit() },
      schema: {
        tags,
        security,
        summary: '任务操作：开始、暂停、继续、停止（非法操作返回 409 及原因）',
        params: taskIdParams.extend({ action: taskAction }),
        response: { 200: envelope(taskDetail), ...guarded },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const detail = await actOnTask(db, projectId, req.params.taskId, req.params.action, now());
      changed(projectId, detail.id);
      return ok(detail);
    },
  );

  app.get(
    `${BASE}/:taskId/contacts`,
    {
      schema: {
        tags,
        security,
        summary: '任务联系人（状态、呼叫次数、最近结果）',
        params: taskIdParams,
        querystring: taskContactListQuery,
        response: { 200: envelope(taskContactList), ...guarded },
      },
    },
    async (req) => ok(await listContacts(db, requireProject(req).id, req.params.taskId, req.query)),
  );

  app.get(
    '/api/project/:projectId/dashboard',
    {
      schema: {
        tags: ['首页'],
        security,
        summary:
          '首页：今日与昨日、近 7 日同时段对比（北京时间，来自统计汇总），趋势，进行中的任务与预计完成时间，需要关注的事项，余额与并发',
        params: projectIdParams,
        response: { 200: envelope(dashboardSummary), ...guarded },
      },
    },
    async (req) => ok(await dashboard(db, requireProject(req).id, now(), { trunks: () => runtime.trunks })),
  );
};
