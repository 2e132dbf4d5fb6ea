import { z } from 'zod';
import { intentGrade } from './assistants';
import { entityId } from './common';

/**
 * 数据统计: the reports' shared query and their answers. Times are China time (UTC+8, no daylight
 * saving); a call counts in the hour and day it started. Every figure comes with the call-record
 * list filters that reproduce the calls behind it (`drill`), so the console links each number to
 * its list.
 */

export const REPORT_MAX_DAYS = 366;
/** Up to this many days a report is hourly, beyond it daily. */
export const REPORT_HOURLY_MAX_DAYS = 31;

export const reportRangeQuery = z
  .object({
    /** First day, China time (YYYY-MM-DD). */
    from: z.iso.date({ error: '开始日期须为 YYYY-MM-DD' }),
    /** Last day, inclusive. */
    to: z.iso.date({ error: '结束日期须为 YYYY-MM-DD' }),
    /** 'auto': hourly up to 31 days, daily beyond. */
    granularity: z.enum(['auto', 'hour', 'day'], { error: '粒度须为 auto、hour 或 day' }).default('auto'),
    assistantId: entityId('小助手').optional(),
    /** A project number (outbound caller number or inbound number dialled). */
    lineNumber: z.string().trim().max(32).optional(),
    flowId: entityId('流程').optional(),
    taskId: entityId('任务').optional(),
  })
  .refine((q) => q.from <= q.to, { error: '结束日期不能早于开始日期', path: ['to'] })
  .refine((q) => (Date.parse(q.to) - Date.parse(q.from)) / 86_400_000 + 1 <= REPORT_MAX_DAYS, {
    error: `日期范围不能超过 ${REPORT_MAX_DAYS} 天`,
    path: ['to'],
  });
export type ReportRangeQuery = z.infer<typeof reportRangeQuery>;

export const reportExportQuery = z.object({ format: z.enum(['csv', 'xlsx']).default('xlsx') });

/**
 * The call-record list filters behind a figure: the console opens /call-record/list with these as
 * its URL query (the list's own filter names: from/to as ISO datetimes, direction, status,
 * endReason, grade, assistantId, taskId, number, flowId, transferred, humanGraded ...).
 */
export const reportDrill = z.record(z.string(), z.string());
export type ReportDrill = z.infer<typeof reportDrill>;

/**
 * A figure now and in the previous period of the same length (for ↑↓ %). `drill` reproduces
 * `value` (the range asked for); `previousDrill`, where given, reproduces `previous` (the same
 * filters over the previous period), so a link on the previous figure never opens this range's calls.
 */
export const reportFigure = z.object({
  value: z.number(),
  previous: z.number(),
  drill: reportDrill.nullable(),
  previousDrill: reportDrill.nullable().optional(),
});
export type ReportFigure = z.infer<typeof reportFigure>;

/** One point of a trend: the bucket's start (ISO, China-time hour or day) and named values. */
export const reportPoint = z.object({
  at: z.iso.datetime(),
  values: z.record(z.string(), z.number()),
});
export type ReportPoint = z.infer<typeof reportPoint>;

export const reportSeries = z.object({
  granularity: z.enum(['hour', 'day']),
  points: z.array(reportPoint),
});

/** A row of a breakdown table (by number, by flow, by assistant version ...). */
export const reportRow = z.object({
  key: z.string(),
  label: z.string(),
  values: z.record(z.string(), z.number()),
  drill: reportDrill.nullable(),
});
export type ReportRow = z.infer<typeof reportRow>;

/** Hour of day (0-23) × weekday (1 Monday … 7 Sunday), China time. */
export const reportHeatmap = z.array(
  z.object({ weekday: z.number().int(), hour: z.number().int(), value: z.number() }),
);

// ---------------------------------------------------------------------------------------------
// /data-report/callin
// ---------------------------------------------------------------------------------------------

export const callinReport = z.object({
  range: z.object({ from: z.string(), to: z.string(), previousFrom: z.string(), previousTo: z.string() }),
  figures: z.object({
    offered: reportFigure,
    answered: reportFigure,
    assistantAnswered: reportFigure,
    transferred: reportFigure,
    abandonedRinging: reportFigure,
    abandonedFlow: reportFigure,
    overLimit: reportFigure,
    /** 0-1 */
    answerRate: reportFigure,
    avgWaitSeconds: reportFigure,
    maxWaitSeconds: reportFigure,
    avgTalkSeconds: reportFigure,
    maxTalkSeconds: reportFigure,
  }),
  /** Answered within 3, 5, 10, 20 s and later: counts. */
  answeredWithin: z.array(
    z.object({ label: z.string(), count: z.number().int(), drill: reportDrill.nullable() }),
  ),
  trend: reportSeries,
  heatmap: reportHeatmap,
  byNumber: z.array(reportRow),
  byFlow: z.array(reportRow),
  /** The chosen flow's node funnel (flowId given): nodes in path order with the calls that reached each. */
  flowFunnel: z
    .array(z.object({ nodeId: z.string(), label: z.string(), calls: z.number().int(), drill: reportDrill }))
    .nullable(),
});
export type CallinReport = z.infer<typeof callinReport>;

// ---------------------------------------------------------------------------------------------
// /data-report/assistant
// ---------------------------------------------------------------------------------------------

export const latencyComponent = z.enum(['recognition', 'retrieval', 'brain', 'synthesis']);
export type LatencyComponent = z.infer<typeof latencyComponent>;

export const assistantReportRow = z.object({
  assistantId: z.string(),
  assistantName: z.string(),
  /** Null: the assistant's all versions together. */
  version: z.number().int().nullable(),
  calls: z.number().int(),
  answered: z.number().int(),
  answerRate: z.number(),
  avgTurns: z.number(),
  avgTalkSeconds: z.number(),
  grades: z.record(intentGrade, z.number().int()),
  transferRate: z.number(),
  optOutRate: z.number(),
  drill: reportDrill,
});
export type AssistantReportRow = z.infer<typeof assistantReportRow>;

export const assistantReport = z.object({
  rows: z.array(assistantReportRow),
  trend: reportSeries,
  /** Answered calls the callee hung up, by the turn count at hang-up (30 = 30 or more). */
  /** Answered calls the caller hung up, by their number of turns (the last bucket: that many or more). */
  hangupFunnel: z.array(z.object({ turn: z.number().int(), calls: z.number().int(), drill: reportDrill })),
  latency: z.array(
    z.object({
      component: latencyComponent,
      p50Ms: z.number().nullable(),
      p95Ms: z.number().nullable(),
      samples: z.number().int(),
    }),
  ),
  /**
   * 评级一致性: on calls a person re-graded in the range, how often the machine agreed, per version,
   * with the confusion matrix (machine grade → human grade → calls).
   */
  grading: z.array(
    z.object({
      assistantId: z.string(),
      assistantName: z.string(),
      /** Null: draft test calls. */
      version: z.number().int().nullable(),
      regraded: z.number().int(),
      agreed: z.number().int(),
      matrix: z.record(intentGrade, z.record(intentGrade, z.number().int())),
      drill: reportDrill,
    }),
  ),
});
export type AssistantReport = z.infer<typeof assistantReport>;

/** 外显号码健康度 */
export const numberHealthRow = z.object({
  number: z.string(),
  calls: z.number().int(),
  answered: z.number().int(),
  answerRate: z.number(),
  /** The number's own answer rate over the 28 days before the range. */
  baselineAnswerRate: z.number().nullable(),
  shortAnsweredShare: z.number(),
  rejected: z.number().int(),
  /** Answer rate fell sharply against its own history: likely marked as spam (标记号码). */
  warning: z.boolean(),
  /** Still one of the project's numbers (it can be rested); false for a number since removed. */
  projectNumber: z.boolean(),
  /** 休息中 since: tasks place no calls from it. */
  restingSince: z.iso.datetime().nullable(),
  trend: z.array(
    z.object({ at: z.iso.datetime(), answerRate: z.number().nullable(), calls: z.number().int() }),
  ),
  drill: reportDrill,
});
export type NumberHealthRow = z.infer<typeof numberHealthRow>;
export const numberHealthReport = z.object({ rows: z.array(numberHealthRow) });
export type NumberHealthReport = z.infer<typeof numberHealthReport>;

// ---------------------------------------------------------------------------------------------
// /data-report/knowledge
// ---------------------------------------------------------------------------------------------

export const knowledgeReport = z.object({
  figures: z.object({ questions: reportFigure, hitRate: reportFigure, noAnswerRate: reportFigure }),
  byKnowledgeBase: z.array(reportRow),
  trend: reportSeries,
  topSegments: z.array(
    z.object({
      segmentId: z.string(),
      knowledgeBaseId: z.string(),
      documentName: z.string(),
      content: z.string(),
      hits: z.number().int(),
    }),
  ),
});
export type KnowledgeReport = z.infer<typeof knowledgeReport>;

/**
 * The knowledge report's query: the range and granularity of every report, narrowed to one
 * knowledge base (the rollups have no assistant, number, flow or task dimension).
 */
export const knowledgeReportQuery = z
  .object({
    from: z.iso.date({ error: '开始日期须为 YYYY-MM-DD' }),
    to: z.iso.date({ error: '结束日期须为 YYYY-MM-DD' }),
    granularity: z.enum(['auto', 'hour', 'day'], { error: '粒度须为 auto、hour 或 day' }).default('auto'),
    knowledgeBaseId: entityId('知识库').optional(),
  })
  .refine((q) => q.from <= q.to, { error: '结束日期不能早于开始日期', path: ['to'] })
  .refine((q) => (Date.parse(q.to) - Date.parse(q.from)) / 86_400_000 + 1 <= REPORT_MAX_DAYS, {
    error: `日期范围不能超过 ${REPORT_MAX_DAYS} 天`,
    path: ['to'],
  });
export type KnowledgeReportQuery = z.infer<typeof knowledgeReportQuery>;

export const knowledgeGapTopic = z.object({
  /** Stable for the same grouping: the representative question's call and turn. */
  id: z.string(),
  knowledgeBaseId: z.string(),
  knowledgeBaseName: z.string(),
  /** The most typical question of the topic. */
  question: z.string(),
  count: z.number().int(),
  examples: z.array(
    z.object({
      callId: z.string(),
      turnIndex: z.number().int(),
      question: z.string(),
      askedAt: z.iso.datetime(),
    }),
  ),
  /** The closest existing pair below the threshold, offered for 添加为相似问. */
  suggestedPair: z
    .object({
      documentId: z.string(),
      /** The pair itself (a question-answer segment of that document): what 添加为相似问 extends. */
      segmentId: z.string(),
      question: z.string(),
      score: z.number(),
    })
    .nullable(),
});
export type KnowledgeGapTopic = z.infer<typeof knowledgeGapTopic>;
export const knowledgeGapList = z.object({ topics: z.array(knowledgeGapTopic), total: z.number().int() });

export const knowledgeGapResolveRequest = z.discriminatedUnion('as', [
  z.object({
    as: z.literal('similar'),
    topicId: z.string(),
    /** The suggested pair's document. */
    documentId: entityId('问答对'),
    /** The pair (suggestedPair.segmentId); without it documentId is read as the pair's id. */
    segmentId: entityId('问答对').optional(),
    question: z.string().trim().min(1).max(200),
  }),
  z.object({
    as: z.literal('pair'),
    topicId: z.string(),
    knowledgeBaseId: entityId('知识库'),
    question: z.string().trim().min(1, { error: '请输入问题' }).max(200),
    answer: z.string().trim().min(1, { error: '请输入答案' }).max(2000),
  }),
]);
export type KnowledgeGapResolveRequest = z.infer<typeof knowledgeGapResolveRequest>;

export const knowledgeGapResolveResult = z.object({
  /** The pair that now answers the question (extended or created). */
  segmentId: z.string(),
  knowledgeBaseId: z.string(),
});
export type KnowledgeGapResolveResult = z.infer<typeof knowledgeGapResolveResult>;
