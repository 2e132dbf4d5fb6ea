import {
  assistantReport,
  envelope,
  errorEnvelope,
  numberHealthReport,
  projectIdParams,
  reportExportQuery,
  reportRangeQuery,
} from '@callpilot/contracts';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok, sendDownload } from '../../lib/reply';
import {
  CSV_CONTENT_TYPE,
  csvFile,
  type SheetValue,
  XLSX_CONTENT_TYPE,
  xlsxFile,
} from '../../lib/spreadsheet';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { assistantReportSheet, assistantReport as buildAssistantReport } from './assistant-report';
import { numberHealthReport as buildNumberHealthReport, numberHealthSheet } from './numbers-report';

const failures = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const BASE = '/api/project/:projectId/reports';
const exportQuery = z.intersection(reportRangeQuery, reportExportQuery);

/** A report's table as the chosen file, named after the report and its range. */
async function sendSheet(
  reply: FastifyReply,
  name: { zh: string; ascii: string },
  range: { from: string; to: string },
  format: 'csv' | 'xlsx',
  sheet: { header: string[]; rows: SheetValue[][] },
) {
  const body =
    format === 'xlsx'
      ? await xlsxFile(
          name.zh,
          sheet.header.map((header) => ({ header, width: Math.max(10, header.length * 2 + 2) })),
          sheet.rows,
        )
      : csvFile(sheet.header, sheet.rows);
  const contentType = format === 'xlsx' ? XLSX_CONTENT_TYPE : CSV_CONTENT_TYPE;
  const suffix = `${range.from}_${range.to}.${format}`;
  return sendDownload(
    reply,
    { fileName: `${name.zh}-${suffix}`, contentType, body },
    `${name.ascii}-${suffix}`,
  );
}

export const reportsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['数据统计'];
  const security = [{ bearerAuth: [] }];
  const download = '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。';

  app.get(
    `${BASE}/assistant`,
    {
      schema: {
        tags,
        security,
        summary: '小助手报表（按小助手与版本、趋势、挂断轮次、各环节时延、评级一致性）',
        params: projectIdParams,
        querystring: reportRangeQuery,
        response: { 200: envelope(assistantReport), ...failures },
      },
    },
    async (req) => ok(await buildAssistantReport(db, requireProject(req).id, req.query)),
  );

  app.get(
    `${BASE}/assistant/export`,
    {
      schema: {
        tags,
        security,
        summary: '导出小助手报表（CSV / XLSX）',
        description: download,
        params: projectIdParams,
        querystring: exportQuery,
      },
    },
    async (req, reply) => {
      const { format, ...query } = req.query;
      const report = await buildAssistantReport(db, requireProject(req).id, query);
      return sendSheet(
        reply,
        { zh: '小助手报表', ascii: 'assistant-report' },
        query,
        format,
        assistantReportSheet(report),
      );
    },
  );

  app.get(
    `${BASE}/numbers`,
    {
      schema: {
        tags,
        security,
        summary: '外显号码健康度（接通率与其近 28 天基准、短通话占比、拒接、标记预警）',
        params: projectIdParams,
        querystring: reportRangeQuery,
        response: { 200: envelope(numberHealthReport), ...failures },
      },
    },
    async (req) => ok(await buildNumberHealthReport(db, requireProject(req).id, req.query)),
  );

  app.get(
    `${BASE}/numbers/export`,
    {
      schema: {
        tags,
        security,
        summary: '导出外显号码健康度（CSV / XLSX）',
        description: download,
        params: projectIdParams,
        querystring: exportQuery,
      },
    },
    async (req, reply) => {
      const { format, ...query } = req.query;
      const report = await buildNumberHealthReport(db, requireProject(req).id, query);
      return sendSheet(
        reply,
        { zh: '外显号码健康度', ascii: 'number-health' },
        query,
        format,
        numberHealthSheet(report),
      );
    },
  );
};
