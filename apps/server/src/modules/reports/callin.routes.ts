import {
  callinReport,
  envelope,
  errorEnvelope,
  projectIdParams,
  reportExportQuery,
  reportRangeQuery,
} from '@callpilot/contracts';
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok, sendDownload } from '../../lib/reply';
import { CSV_CONTENT_TYPE, XLSX_CONTENT_TYPE } from '../../lib/spreadsheet';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { callinReport as buildCallinReport } from './callin';
import { callinCsv, callinXlsx } from './callin.export';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const REPORTS_BASE = '/api/project/:projectId/reports';
const reportTags = ['数据统计'];
const reportSecurity = [{ bearerAuth: [] }];

type ReportRoutes = (app: FastifyInstance, options: ModuleOptions) => void;

/** 呼入统计 and its export. */
const callinRoutes: ReportRoutes = (app, { db }) => {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.get(
    `${REPORTS_BASE}/callin`,
    {
      schema: {
        tags: reportTags,
        security: reportSecurity,
        summary: '呼入统计：来电、接通、放弃、等待与通话时长（含上期对比、趋势、热力图、按号码与流程）',
        description:
          '日期为北京时间；通话计入其开始的小时与日期。每个指标带 drill：复现该数字的通话记录筛选条件。',
        params: projectIdParams,
        querystring: reportRangeQuery,
        response: { 200: envelope(callinReport), ...guarded },
      },
    },
    async (req) => ok(await buildCallinReport(db, requireProject(req).id, req.query)),
  );

  typed.get(
    `${REPORTS_BASE}/callin/export`,
    {
      schema: {
        tags: reportTags,
        security: reportSecurity,
        summary: '导出呼入统计（CSV / XLSX：指标、趋势、按号码、按流程）',
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
        params: projectIdParams,
        querystring: z.intersection(reportRangeQuery, reportExportQuery),
      },
    },
    async (req, reply) => {
      const { format, ...query } = req.query;
      const report = await buildCallinReport(db, requireProject(req).id, query);
      const fileName = `呼入统计-${query.from}至${query.to}.${format}`;
      const body = format === 'xlsx' ? await callinXlsx(report) : callinCsv(report);
      const contentType = format === 'xlsx' ? XLSX_CONTENT_TYPE : CSV_CONTENT_TYPE;
      return sendDownload(reply, { fileName, contentType, body }, `callin.${format}`);
    },
  );
};

/** 呼入统计's routes (a project route: membership is checked by the project guard). */
export const callinReportRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, options) => {
  callinRoutes(app, options);
};
