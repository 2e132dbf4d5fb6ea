import { randomUUID } from 'node:crypto';
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
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Dialer } from '../../engine/dialer/dialer';
import { type Relay, startRelay } from '../../lib/relay';
import { ok } from '../../lib/reply';
import { streamEvents } from '../../lib/sse';
import { requireProject } from '../../plugins/project-access';
import {
  type LoadedAssistant,
  loadAssistantForCall,
  placeCall,
  SIM_CALLER_NUMBER,
} from '../calls/call-runner';
import type { ModuleOptions } from '../index';
import { ensureDemoTasks } from './demo-tasks';
import { createDialerStore } from './dialer-store';
import { TaskEventHub } from './task-events';
import {
  actOnTask,
  copyTask,
  createTask,
  dashboard,
  deleteTask,
  getTaskDetail,
  getTaskSummary,
  listContacts,
  listTasks,
  preflightTask,
  updateTask,
} from './tasks.service';

export interface TaskRuntime {
  /** This process's dialer (started when the server is ready). */
  dialer: Dialer;
  events: TaskEventHub;
  /** Tasks the demo seeding is dialling on its own simulated clock: the server's dialer leaves them alone. */
  seeding: Set<string>;
  /**
   * Gives the demo project its call tasks (see demo-tasks.ts) when it has none yet or an earlier
   * seeding was interrupted; resolves with the number of tasks created or finished.
   */
  ensureDemoTasks(email: string): Promise<number>;
}

declare module 'fastify' {
  interface FastifyInstance {
    tasks: TaskRuntime;
  }
}

const guarded = {
  400: errorEnvelope,
  401: errorEnvelope,
  403: errorEnvelope,
  404: errorEnvelope,
  409: errorEnvelope,
};
const BASE = '/api/project/:projectId/tasks';

/** Call tasks (呼出任务): settings, state machine, contacts, preflight, live events, the dialer. */
const tasksPlugin: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, database, env, clock }) => {
  const tags = ['呼出任务'];
  const security = [{ bearerAuth: [] }];
  const now = () => app.calls.runnerDeps.clock.now();

  const events = new TaskEventHub(
    async (projectId, taskId) => ({ type: 'task', task: await getTaskSummary(db, projectId, taskId, now()) }),
    undefined,
    (err) => app.log.warn({ err }, 'task event failed'),
  );
  // Other processes dial the same tasks on PostgreSQL: their changes reach this process's watchers
  // through the relay, and the hub then reads the summary from the database.
  let relay: Relay | undefined;
  const taskChanged = (projectId: string, taskId: string) => {
    events.changed(projectId, taskId);
    relay?.send(`${projectId}/${taskId}`);
  };
  // Frozen versions never change: one load per task version, not per call.
  const assistantsCache = new Map<string, Promise<LoadedAssistant>>();
  const seeding = new Set<string>();
  const dialer = new Dialer({
    store: createDialerStore(db),
    clock: app.calls.runnerDeps.clock,
    processId: `server-${randomUUID()}`,
    defaultCallerNumber: SIM_CALLER_NUMBER,
    recoverForeignLeasesAtStart: database.kind === 'pglite',
    ownsTask: (taskId) => !seeding.has(taskId),
    log: app.log,
    onTaskChanged: (projectId, taskId) => taskChanged(projectId, taskId),
    // A test's simulated clock already compresses time; otherwise follow the simulated carrier's scale.
    retryTimeScale: clock ? 1 : env.SIM_TIME_SCALE,
    dial: async (job) => {
      const { task, contact } = job;
      if (!task.assistantId) throw new Error('task has no assistant');
      const key = `${task.projectId}/${task.assistantId}@${task.assistantVersion ?? 'live'}`;
      let loaded = assistantsCache.get(key);
      if (!loaded) {
        loaded = loadAssistantForCall(
          db,
          task.projectId,
          task.assistantId,
          task.assistantVersion ?? undefined,
        );
        assistantsCache.set(key, loaded);
        loaded.catch(() => assistantsCache.delete(key));
      }
      return placeCall(
        app.calls.runnerDeps,
        {
          projectId: task.projectId,
          assistantId: task.assistantId,
          version: task.assistantVersion ?? undefined,
          callId: job.callId,
          callerNumber: job.callerNumber,
          calleeNumber: contact.phone,
          variables: contact.variables,
          taskId: task.id,
          taskName: task.name,
          contactId: contact.id,
          contactName: contact.name,
          signal: job.signal,
        },
        await loaded,
      );
    },
  });
  app.decorate('tasks', {
    dialer,
    events,
    seeding,
    ensureDemoTasks: (email: string) => ensureDemoTasks(app, email),
  } satisfies TaskRuntime);
  app.addHook('onReady', async () => {
    relay = await startRelay(
      database,
      'task_events',
      (payload) => {
        const [projectId = '', taskId = ''] = payload.split('/');
        events.changed(projectId, taskId);
      },
      (err) => app.log.warn({ err }, 'task event relay failed'),
    );
    await dialer.start();
  });
  app.addHook('preClose', async () => {
    await relay?.stop();
    events.close();
    await dialer.stop();
  });

  /** After a state change over HTTP: dial now rather than at the next tick, and tell the watchers. */
  const changed = (projectId: string, taskId: string) => {
    dialer.wake();
    taskChanged(projectId, taskId);
  };

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
        (send) => events.subscribe(projectId, send, req.query.taskId),
        (end) => app.calls.onStop(end),
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
        summary: '首页：今日与近 7 天（北京时间）的通话数据、进行中的任务',
        params: projectIdParams,
        response: { 200: envelope(dashboardSummary), ...guarded },
      },
    },
    async (req) => ok(await dashboard(db, requireProject(req).id, now())),
  );
};

/** Not encapsulated: `app.tasks` (the dialer and the demo seeding) is used by the server's start-up. */
export const tasksRoutes = fp(tasksPlugin, { name: 'tasks', dependencies: ['calls', 'project-access'] });
