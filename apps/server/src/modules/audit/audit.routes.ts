import {
  auditLogFilters,
  auditLogList,
  auditLogQuery,
  canManageProject,
  envelope,
  errorEnvelope,
  projectIdParams,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { forbidden } from '../../lib/errors';
import { ok, sendDownload } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { auditActor, recordAudit } from './audit.service';
import { exportAuditLogCsv, listAuditLog } from './audit-log.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const BASE = '/api/project/:projectId/audit-log';

/**
 * Reading the audit log. There is deliberately no route that writes, edits or deletes an entry:
 * entries are written by the changes they record, and removed only by the retention sweep.
 */
export const auditRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['操作日志'];
  const security = [{ bearerAuth: [] }];

  const requireManager = (req: Parameters<typeof requireProject>[0]) => {
    const project = requireProject(req);
    if (!canManageProject(project.role)) throw forbidden('仅项目所有者和管理员可查看操作日志');
    return project;
  };

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '项目操作日志（所有者与管理员；服务端分页与筛选，保留 180 天）',
        params: projectIdParams,
        querystring: auditLogQuery,
        response: { 200: envelope(auditLogList), ...guarded },
      },
    },
    async (req) => ok(await listAuditLog(db, { projectId: requireManager(req).id }, req.query)),
  );

  app.get(
    `${BASE}/export`,
    {
      schema: {
        tags,
        security,
        summary: '按当前筛选导出项目操作日志（CSV，最多 50000 条），导出本身也记入操作日志',
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
        params: projectIdParams,
        querystring: auditLogFilters,
      },
    },
    async (req, reply) => {
      const project = requireManager(req);
      const file = await exportAuditLogCsv(db, { projectId: project.id }, req.query);
      // Who took a copy of the trail is itself part of the trail.
      await recordAudit(db, {
        ...auditActor(req),
        action: 'audit.exported',
        summary: `导出 ${file.rows} 条`,
        detail: { filters: req.query, rows: file.rows },
      });
      return sendDownload(reply, file, 'audit-log.csv');
    },
  );

  app.get(
    '/api/user/audit-log',
    {
      schema: {
        tags,
        security,
        summary: '当前用户的账号事件（登录、登录失败、退出、修改密码、结束会话）',
        querystring: auditLogQuery,
        response: { 200: envelope(auditLogList), 400: errorEnvelope, 401: errorEnvelope },
      },
      onRequest: app.authenticate,
    },
    async (req) => {
      const user = requireUser(req);
      return ok(await listAuditLog(db, { userId: user.id, email: user.email }, req.query));
    },
  );
};
