import {
  envelope,
  errorEnvelope,
  projectIdParams,
  smsMessage,
  smsMessageExportQuery,
  smsMessageIdParams,
  smsMessageList,
  smsMessageListQuery,
  smsStatistics,
  smsStatisticsQuery,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok, sendDownload } from '../../lib/reply';
import { CSV_CONTENT_TYPE, XLSX_CONTENT_TYPE } from '../../lib/spreadsheet';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { exportSmsCsv, exportSmsXlsx } from './sms-records.export';
import { smsStatistics as buildStatistics, getSmsMessage, listSmsMessages } from './sms-records.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const BASE = '/api/project/:projectId/sms';

/** 发送记录 (the list, one record, the export) and 数据统计 of a project's SMS: read only. */
export const smsRecordsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['短信管理'];
  const security = [{ bearerAuth: [] }];

  app.get(
    `${BASE}/messages`,
    {
      schema: {
        tags,
        security,
        summary: '短信发送记录（服务端分页与筛选，最新在前）',
        description: 'total 精确到 10,000 条；超过时 totalCapped 为 true，请缩小筛选范围。',
        params: projectIdParams,
        querystring: smsMessageListQuery,
        response: { 200: envelope(smsMessageList), ...guarded },
      },
    },
    async (req) => ok(await listSmsMessages(db, requireProject(req).id, req.query)),
  );

  app.get(
    `${BASE}/messages/export`,
    {
      schema: {
        tags,
        security,
        summary: '按当前筛选导出短信发送记录（CSV / XLSX，流式生成）',
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
        params: projectIdParams,
        querystring: smsMessageExportQuery,
      },
    },
    async (req, reply) => {
      const projectId = requireProject(req).id;
      const { format, ...filters } = req.query;
      const stamp = new Date(Date.now() + 8 * 3600_000).toISOString().slice(0, 16).replace(/[-:T]/g, '');
      const fileName = `短信发送记录-${stamp}.${format}`;
      const body =
        format === 'xlsx' ? exportSmsXlsx(db, projectId, filters) : exportSmsCsv(db, projectId, filters);
      body.on('error', (err) => req.log.error({ err }, 'sms export failed'));
      const contentType = format === 'xlsx' ? XLSX_CONTENT_TYPE : CSV_CONTENT_TYPE;
      return sendDownload(reply, { fileName, contentType, body }, `sms-messages.${format}`);
    },
  );

  app.get(
    `${BASE}/messages/:messageId`,
    {
      schema: {
        tags,
        security,
        summary: '一条短信的详情：全文与状态时间线',
        params: smsMessageIdParams,
        response: { 200: envelope(smsMessage), ...guarded },
      },
    },
    async (req) => ok(await getSmsMessage(db, requireProject(req).id, req.params.messageId)),
  );

  app.get(
    `${BASE}/statistics`,
    {
      schema: {
        tags,
        security,
        summary: '短信数据统计（按中国自然日：合计、逐日、按模板、失败原因前 10）',
        params: projectIdParams,
        querystring: smsStatisticsQuery,
        response: { 200: envelope(smsStatistics), ...guarded },
      },
    },
    async (req) => ok(await buildStatistics(db, requireProject(req).id, req.query)),
  );
};
