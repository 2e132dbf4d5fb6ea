import {
  envelope,
  errorEnvelope,
  knowledgeGapList,
  knowledgeGapResolveRequest,
  knowledgeGapResolveResult,
  knowledgeReport,
  knowledgeReportQuery,
  projectIdParams,
  reportExportQuery,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok, sendDownload } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import { embedderForProject } from '../knowledge/embedder';
import type { ModuleOptions } from '../module-options';
import {
  knowledgeReport as buildReport,
  exportKnowledgeReport,
  listKnowledgeGaps,
  resolveKnowledgeGap,
} from './knowledge-report';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const BASE = '/api/project/:projectId/reports/knowledge';

/** 数据统计 › 知识库: the report, the knowledge-gap list and its resolution, the export. */
export const knowledgeReportRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  const secret = loadAppSecret(env);
  const tags = ['数据统计'];
  const security = [{ bearerAuth: [] }];

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '知识库统计：提问数、命中率、未回答率（含上期）、按知识库、趋势、常用分段',
        params: projectIdParams,
        querystring: knowledgeReportQuery,
        response: { 200: envelope(knowledgeReport), ...guarded },
      },
    },
    async (req) => ok(await buildReport(db, requireProject(req).id, req.query)),
  );

  app.get(
    `${BASE}/gaps`,
    {
      schema: {
        tags,
        security,
        summary: '知识缺口：未能回答的问题按相似度归为话题，已补充知识的话题不再列出',
        params: projectIdParams,
        querystring: knowledgeReportQuery,
        response: { 200: envelope(knowledgeGapList), ...guarded },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const embedder = await embedderForProject(db, secret, projectId);
      return ok(await listKnowledgeGaps(db, projectId, req.query, embedder));
    },
  );

  app.post(
    `${BASE}/gaps/resolve`,
    {
      schema: {
        tags,
        security,
        summary: '补充知识：把问题添加为问答对的相似问，或在知识库中新建问答对',
        params: projectIdParams,
        body: knowledgeGapResolveRequest,
        response: { 200: envelope(knowledgeGapResolveResult), ...guarded },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const embedder = await embedderForProject(db, secret, projectId);
      return ok(await resolveKnowledgeGap(db, projectId, req.body, embedder));
    },
  );

  app.get(
    `${BASE}/export`,
    {
      schema: {
        tags,
        security,
        summary: '导出知识库统计（指标、按知识库、知识缺口）',
        params: projectIdParams,
        querystring: knowledgeReportQuery.and(reportExportQuery),
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
      },
    },
    async (req, reply) => {
      const projectId = requireProject(req).id;
      const embedder = await embedderForProject(db, secret, projectId);
      const file = await exportKnowledgeReport(db, projectId, req.query, req.query.format, embedder);
      return sendDownload(reply, file, `knowledge-report.${req.query.format}`);
    },
  );
};
