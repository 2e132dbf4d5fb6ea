import {
  assistantReport,
  callinReport,
  envelope,
  errorEnvelope,
  knowledgeGapList,
  knowledgeGapResolveRequest,
  knowledgeGapResolveResult,
  knowledgeReport,
  knowledgeReportQuery,
  numberHealthReport,
  projectIdParams,
  reportExportQuery,
  reportRangeQuery,
} from '@callpilot/contracts';
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import { embedderForProject } from '../knowledge/embedder';
import type { ModuleOptions } from '../module-options';
import { assistantReportSheet, assistantReport as buildAssistantReport } from './assistant-report';
import { callinReport as buildCallinReport } from './callin';
import { callinSheets } from './callin.export';
import {
  knowledgeReport as buildKnowledgeReport,
  knowledgeReportSheets,
  listKnowledgeGaps,
  resolveKnowledgeGap,
} from './knowledge-report';
import { numberHealthReport as buildNumberHealthReport, numberHealthSheet } from './numbers-report';
import { type ReportSheet, sendReportFile } from './report-file';

const BASE = '/api/project/:projectId/reports';
const failures = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const tags = ['数据统计'];
const security = [{ bearerAuth: [] }];
const DOWNLOAD = '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。';
const CHINA_TIME =
  '日期为北京时间；通话计入其开始的小时与日期。每个指标带 drill：复现该数字的通话记录筛选条件。';

/** A report: its JSON answer at `path` and the same figures as a file at `path/export`. */
interface ReportSpec<Q extends z.ZodType<{ from: string; to: string }>, R> {
  path: string;
  summary: string;
  exportSummary: string;
  query: Q;
  answer: z.ZodType;
  file: { zh: string; ascii: string };
  build: (projectId: string, query: z.output<Q>) => Promise<R>;
  sheets: (report: R, projectId: string, query: z.output<Q>) => ReportSheet[] | Promise<ReportSheet[]>;
}

/**
 * Every report registers through here: the same range query (parsed by its contract, the range
 * rules in rollup-range.ts), the same guard, and one way to write its file, so the report and
 * its export cannot disagree on what a query means.
 */
function registerReport<Q extends z.ZodType<{ from: string; to: string }>, R>(
  app: FastifyInstance,
  spec: ReportSpec<Q, R>,
) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.get(
    `${BASE}${spec.path}`,
    {
      schema: {
        tags,
        security,
        summary: spec.summary,
        description: CHINA_TIME,
        params: projectIdParams,
        querystring: spec.query,
        response: { 200: envelope(spec.answer), ...failures },
      },
    },
    async (req) => ok(await spec.build(requireProject(req).id, req.query as z.output<Q>)),
  );
  typed.get(
    `${BASE}${spec.path}/export`,
    {
      schema: {
        tags,
        security,
        summary: spec.exportSummary,
        description: DOWNLOAD,
        params: projectIdParams,
        querystring: z.intersection(spec.query, reportExportQuery),
      },
    },
    async (req, reply) => {
      const { format, ...rest } = req.query as z.output<Q> & { format: 'csv' | 'xlsx' };
      const query = rest as z.output<Q>;
      const projectId = requireProject(req).id;
      const report = await spec.build(projectId, query);
      return sendReportFile(reply, spec.file, query, format, await spec.sheets(report, projectId, query));
    },
  );
}

/** 数据统计: every report and its export, and the knowledge-gap list with its resolution. */
export const reportsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  const secret = loadAppSecret(env);
  const embedder = (projectId: string) => embedderForProject(db, secret, projectId);

  registerReport(app, {
    path: '/callin',
    summary: '呼入统计：来电、接通、放弃、等待与通话时长（含上期对比、趋势、热力图、按号码与流程）',
    exportSummary: '导出呼入统计（CSV / XLSX：指标、趋势、按号码、按流程）',
    query: reportRangeQuery,
    answer: callinReport,
    file: { zh: '呼入统计', ascii: 'callin-report' },
    build: (projectId, query) => buildCallinReport(db, projectId, query),
    sheets: (report) => callinSheets(report),
  });

  registerReport(app, {
    path: '/assistant',
    summary: '小助手报表（按小助手与版本、趋势、挂断轮次、各环节时延、评级一致性）',
    exportSummary: '导出小助手报表（CSV / XLSX）',
    query: reportRangeQuery,
    answer: assistantReport,
    file: { zh: '小助手报表', ascii: 'assistant-report' },
    build: (projectId, query) => buildAssistantReport(db, projectId, query),
    sheets: (report) => [assistantReportSheet(report)],
  });

  registerReport(app, {
    path: '/numbers',
    summary: '外显号码健康度（接通率与其近 28 天基准、短通话占比、拒接、标记预警）',
    exportSummary: '导出外显号码健康度（CSV / XLSX）',
    query: reportRangeQuery,
    answer: numberHealthReport,
    file: { zh: '外显号码健康度', ascii: 'number-health' },
    build: (projectId, query) => buildNumberHealthReport(db, projectId, query),
    sheets: (report) => [numberHealthSheet(report)],
  });

  registerReport(app, {
    path: '/knowledge',
    summary: '知识库统计：提问数、命中率、未回答率（含上期）、按知识库、趋势、常用分段',
    exportSummary: '导出知识库统计（指标、按知识库、知识缺口）',
    query: knowledgeReportQuery,
    answer: knowledgeReport,
    file: { zh: '知识库统计', ascii: 'knowledge-report' },
    build: (projectId, query) => buildKnowledgeReport(db, projectId, query),
    sheets: async (report, projectId, query) =>
      knowledgeReportSheets(report, await listKnowledgeGaps(db, projectId, query, await embedder(projectId))),
  });

  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.get(
    `${BASE}/knowledge/gaps`,
    {
      schema: {
        tags,
        security,
        summary: '知识缺口：未能回答的问题按相似度归为话题，已补充知识的话题不再列出',
        params: projectIdParams,
        querystring: knowledgeReportQuery,
        response: { 200: envelope(knowledgeGapList), ...failures },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      return ok(await listKnowledgeGaps(db, projectId, req.query, await embedder(projectId)));
    },
  );

  typed.post(
    `${BASE}/knowledge/gaps/resolve`,
    {
      schema: {
        tags,
        security,
        summary: '补充知识：把问题添加为问答对的相似问，或在知识库中新建问答对',
        params: projectIdParams,
        body: knowledgeGapResolveRequest,
        response: { 200: envelope(knowledgeGapResolveResult), ...failures },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      return ok(await resolveKnowledgeGap(db, projectId, req.body, await embedder(projectId)));
    },
  );
};
