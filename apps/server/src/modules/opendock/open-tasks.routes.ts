import {
  envelope,
  errorEnvelope,
  OPEN_TASK_CONTACTS_MAX,
  OPENDOCK_TAGS,
  openTaskContactsRequest,
  openTaskContactsResult,
  openTaskIdParams,
  TASK_STATE_LABELS,
  type TaskAction,
  taskContactList,
  taskContactListQuery,
  taskDetail,
  taskList,
  taskListQuery,
  taskSettings,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../lib/reply';
import { OPENDOCK_PREFIX, requireApiKey } from '../../plugins/api-key-auth';
import { taskActionAudit } from '../audit/audit-trail.plugin';
import type { ModuleOptions } from '../module-options';
import { actOnTask, createTask, getTaskDetail, listContacts, listTasks } from '../tasks/tasks.service';
import { addTaskContacts } from './open-tasks.service';
import { openFailures, openSecurity, scope } from './opendock-schema';

/** 10,000 contacts with a few variables each are about 2 MB of JSON; the app's default is 1 MB. */
const CONTACTS_BODY_LIMIT = 4 * 1024 * 1024;

const ACTIONS: { action: TaskAction; summary: string; description: string }[] = [
  {
    action: 'start',
    summary: '开始任务',
    description:
      '草稿任务开始呼叫：先做与控制台相同的开始前检查（有待呼叫的联系人、小助手已发布、余额与并发、日期与时段），' +
      '不通过时返回 409 及原因。开始日期未到时进入「待开始」，之后在呼叫时段内自动拨号；小助手版本在开始时固定。',
  },
  { action: 'pause', summary: '暂停任务', description: '进行中的任务暂停拨号，进行中的通话照常结束。' },
  { action: 'resume', summary: '继续任务', description: '已暂停的任务继续拨号。' },
  {
    action: 'stop',
    summary: '停止任务',
    description: '进行中、已暂停或待开始的任务停止，不可再开始（可在控制台复制任务）。',
  },
];

/** Call tasks for customers' systems: create, fill with contacts, start and watch them. */
export const openTasksRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, runtime }) => {
  const tags = [OPENDOCK_TAGS.tasks];
  const security = openSecurity;
  const now = () => runtime.clock.now();
  const BASE = `${OPENDOCK_PREFIX}/tasks`;

  app.get(
    BASE,
    {
      config: scope('tasks', 'read'),
      schema: {
        tags,
        security,
        summary: '呼出任务列表',
        description: '分页（page、pageSize），可按名称、状态、小助手与创建时间筛选，按创建时间从新到旧。',
        querystring: taskListQuery,
        response: { 200: envelope(taskList), ...openFailures },
      },
    },
    async (req) => ok(await listTasks(db, requireApiKey(req).projectId, req.query, now())),
  );

  app.post(
    BASE,
    {
      config: scope('tasks', 'write'),
      schema: {
        tags,
        security,
        summary: '新建呼出任务（草稿）',
        description:
          '与控制台新建任务相同的设置：名称、小助手（须已发布）及版本、外显号码、起止日期（北京时间）、呼叫时段、' +
          '是否跳过法定节假日、并发数、各结束原因的重拨规则、每号码每日呼叫上限。新任务为草稿，添加联系人后开始。',
        body: taskSettings,
        response: { 200: envelope(taskDetail), ...openFailures },
      },
    },
    // No user made it: the task has no creator (the key's request log records which key did).
    async (req) => ok(await createTask(db, requireApiKey(req).projectId, null, req.body, now())),
  );

  app.get(
    `${BASE}/:taskId`,
    {
      config: scope('tasks', 'read'),
      schema: {
        tags,
        security,
        summary: '任务详情与进度',
        description:
          '任务状态（state）、联系人计数（counts：总数、等待、拨打中、已完成、接通、跳过，按结束原因与意向等级的通话数）、' +
          '进度 progress（0-1，已完成的联系人占比）、进行中的通话数、接通率、预计剩余秒数 etaSeconds 与任务设置。',
        params: openTaskIdParams,
        response: { 200: envelope(taskDetail), ...openFailures },
      },
    },
    async (req) => ok(await getTaskDetail(db, requireApiKey(req).projectId, req.params.taskId, now())),
  );

  for (const { action, summary, description } of ACTIONS) {
    app.post(
      `${BASE}/:taskId/${action}`,
      {
        config: { ...scope('tasks', 'write'), audit: taskActionAudit(action) },
        schema: {
          tags,
          security,
          summary,
          description: `${description}状态不允许时返回 409 及原因（如“${TASK_STATE_LABELS.stopped}”的任务不能再开始）。`,
          params: openTaskIdParams,
          response: { 200: envelope(taskDetail), ...openFailures },
        },
      },
      async (req) => {
        const projectId = requireApiKey(req).projectId;
        const detail = await actOnTask(db, projectId, req.params.taskId, action, now());
        runtime.taskChanged(projectId, detail.id);
        return ok(detail);
      },
    );
  }

  app.post(
    `${BASE}/:taskId/contacts`,
    {
      config: scope('contacts', 'write'),
      bodyLimit: CONTACTS_BODY_LIMIT,
      schema: {
        tags,
        security,
        summary: '添加联系人',
        description:
          `每次 1-${OPEN_TASK_CONTACTS_MAX} 个联系人（号码、姓名、小助手变量），仅草稿、待开始或已暂停的任务可以添加。` +
          '与控制台导入相同的规则逐行检查：号码无效或缺少必填变量、与前面的行或任务中已有号码重复、在免打扰名单中的行' +
          '不加入，在 rejected 中返回下标与原因；其余行全部加入。',
        params: openTaskIdParams,
        body: openTaskContactsRequest,
        response: { 200: envelope(openTaskContactsResult), ...openFailures, 413: errorEnvelope },
      },
    },
    async (req) => ok(await addTaskContacts(db, requireApiKey(req).projectId, req.params.taskId, req.body)),
  );

  app.get(
    `${BASE}/:taskId/contacts`,
    {
      config: scope('contacts', 'read'),
      schema: {
        tags,
        security,
        summary: '任务联系人列表',
        description:
          '分页，可按状态与号码筛选：每个联系人的状态（待呼叫、呼叫中、等待重拨、已完成、未接通、已跳过）、呼叫次数、' +
          '下次呼叫时间、最近一通电话的 ID（lastCallId，可查询通话详情）、结束原因与意向等级。',
        params: openTaskIdParams,
        querystring: taskContactListQuery,
        response: { 200: envelope(taskContactList), ...openFailures },
      },
    },
    async (req) => ok(await listContacts(db, requireApiKey(req).projectId, req.params.taskId, req.query)),
  );
};
