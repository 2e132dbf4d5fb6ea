import { z } from 'zod';
import { intentGrade, usedSegment } from './assistants';
import { entityId, optionalText, paged, pageQuery } from './common';
import { callFlowPath } from './flows';

export const callDirection = z.enum(['outbound', 'inbound'], { error: '通话方向须为呼出或呼入' });
export type CallDirection = z.infer<typeof callDirection>;
export const CALL_DIRECTION_LABELS: Record<CallDirection, string> = { outbound: '呼出', inbound: '呼入' };

/** ringing and in_progress are the live states the list shows as 通话中. */
export const callStatus = z.enum(['ringing', 'in_progress', 'ended']);
export type CallStatus = z.infer<typeof callStatus>;
export const CALL_STATUS_LABELS: Record<CallStatus, string> = {
  ringing: '呼叫中',
  in_progress: '通话中',
  ended: '已结束',
};

/**
 * Why a call ended. The first group are answered calls, the second the carrier's outcomes of an
 * unanswered one, `failed` anything the platform itself could not do.
 */
export const endReason = z.enum(
  [
    'completed',
    'callee_hangup',
    'opt_out',
    'transferred',
    'silence',
    'max_duration',
    'voicemail',
    'busy',
    'no_answer',
    'powered_off',
    'vacant',
    'rejected',
    'failed',
    'interrupted',
    'callin_limit',
    'not_bound',
  ],
  { error: '结束原因不支持' },
);
export type EndReason = z.infer<typeof endReason>;
export const END_REASON_LABELS: Record<EndReason, string> = {
  completed: '正常结束',
  callee_hangup: '客户挂断',
  opt_out: '客户拒绝（已加入免打扰）',
  transferred: '已转人工',
  silence: '客户无应答',
  max_duration: '超过最长通话时长',
  voicemail: '语音信箱',
  busy: '忙线',
  no_answer: '未接听',
  powered_off: '关机',
  vacant: '空号',
  rejected: '拒接',
  failed: '呼叫失败',
  interrupted: '系统中断',
  callin_limit: '超出呼入并发（已回忙音）',
  not_bound: '号码未配置呼入',
};
/** End reasons of calls that were never answered by a person: no talk time, no intent grade. */
export const UNANSWERED_END_REASONS: readonly EndReason[] = [
  'voicemail',
  'busy',
  'no_answer',
  'powered_off',
  'vacant',
  'rejected',
  'failed',
  'callin_limit',
  'not_bound',
];
/** Ends the retry rules apply to (the dialer calls again later, up to the rule's attempts). */
export const RETRYABLE_END_REASONS = [
  'no_answer',
  'busy',
  'powered_off',
  'rejected',
  'vacant',
  'voicemail',
  'failed',
  'interrupted',
] as const;

export const hangupBy = z.enum(['assistant', 'callee', 'system']);
export type HangupBy = z.infer<typeof hangupBy>;
export const HANGUP_BY_LABELS: Record<HangupBy, string> = {
  assistant: '小助手挂断',
  callee: '客户挂断',
  system: '系统挂断',
};

/** Callees of the simulated carrier (模拟通话). */
export const simPersona = z.enum(
  [
    'interested',
    'hesitant',
    'refuses',
    'asks_question',
    'asks_human',
    'silent',
    'hangs_up',
    'busy',
    'no_answer',
    'powered_off',
    'vacant',
    'rejected',
    'voicemail',
  ],
  { error: '模拟客户类型不支持' },
);
export type SimPersona = z.infer<typeof simPersona>;
export const SIM_PERSONA_LABELS: Record<SimPersona, string> = {
  interested: '有意向的客户',
  hesitant: '犹豫的客户',
  refuses: '明确拒绝的客户',
  asks_question: '咨询问题的客户',
  asks_human: '要求转人工的客户',
  silent: '不说话的客户',
  hangs_up: '中途挂断的客户',
  busy: '忙线',
  no_answer: '无人接听',
  powered_off: '关机',
  vacant: '空号',
  rejected: '拒接',
  voicemail: '语音信箱',
};

export const turnLatency = z.object({
  /** Speech recognition of the callee's words (simulated on the simulated carrier). */
  recognitionMs: z.number(),
  retrievalMs: z.number(),
  /** From the utterance to the brain's complete reply. */
  brainMs: z.number(),
  firstTokenMs: z.number(),
  synthesisMs: z.number(),
  /**
   * Real lines, measured from the audio (absent on the simulated carrier and older calls): the
   * VAD's hang after the caller's last voiced frame, the brain's time to its first whole
   * sentence, the synthesiser's time to that sentence's first audio, and end of the caller's
   * speech → first reply packet on the line (the number the caller feels).
   */
  endpointMs: z.number().optional(),
  firstSentenceMs: z.number().optional(),
  firstAudioMs: z.number().optional(),
  replyStartMs: z.number().optional(),
  /** A provider failed or was too slow in this turn and its fallback answered instead. */
  fallbacks: z.array(z.enum(['recognition', 'synthesis', 'brain'])).optional(),
  /** Why the brain gave no reply and the fallback line was said (timeout, provider error). */
  brainError: z.string().optional(),
  /**
   * Part of retrievalMs the assistant's model spent rewriting the caller's words and re-ranking
   * the candidates (知识库大模型改写与重排); absent when it did not run.
   */
  rewriteMs: z.number().optional(),
  rerankMs: z.number().optional(),
});
export type TurnLatency = z.infer<typeof turnLatency>;

export const callTurn = z.object({
  index: z.number().int(),
  speaker: z.enum(['assistant', 'callee']),
  text: z.string(),
  /** DTMF keys the callee pressed in this turn, if any. */
  dtmf: z.string().nullable(),
  /** Offsets from the moment the call was answered, matching the recording. */
  startMs: z.number().int(),
  endMs: z.number().int(),
  /** An assistant line the callee talked over (barge-in). */
  interrupted: z.boolean(),
  /** Assistant turns that answered an utterance. */
  latency: turnLatency.nullable(),
  segments: z.array(usedSegment),
});
export type CallTurn = z.infer<typeof callTurn>;

export const callSummary = z
  .object({
    id: z.string(),
    direction: callDirection,
    callerNumber: z.string(),
    calleeNumber: z.string(),
    taskId: z.string().nullable(),
    taskName: z.string().nullable(),
    contactId: z.string().nullable(),
    contactName: z.string().nullable(),
    assistantId: z.string().nullable(),
    assistantName: z.string(),
    assistantVersion: z.number().int().nullable(),
    status: callStatus,
    endReason: endReason.nullable(),
    hangupBy: hangupBy.nullable(),
    /** When dialling started (or the inbound call arrived). */
    startedAt: z.iso.datetime(),
    answeredAt: z.iso.datetime().nullable(),
    endedAt: z.iso.datetime().nullable(),
    talkSeconds: z.number().int(),
    turnCount: z.number().int(),
    /** The human grade when there is one, otherwise the machine's. */
    intentGrade: intentGrade.nullable(),
    machineGrade: intentGrade.nullable(),
    humanGrade: intentGrade.nullable(),
    tags: z.array(z.string()),
    summary: z.string(),
    recording: z.enum(['none', 'pending', 'ready', 'failed']),
    /** Simulated-carrier calls only. */
    persona: simPersona.nullable(),
  })
  .meta({ id: 'CallSummary' });
export type CallSummary = z.infer<typeof callSummary>;

export const callDetail = callSummary
  .extend({
    turns: z.array(callTurn),
    /** Analysis: who produced it and what it extracted (e.g. 意向产品, 预约时间). */
    analysisBy: z.enum(['llm', 'rules']).nullable(),
    gradeReason: z.string(),
    fields: z.record(z.string(), z.string()),
    humanGradedBy: z.string().nullable(),
    humanGradedAt: z.iso.datetime().nullable(),
    transferNumber: z.string().nullable(),
    transferredAt: z.iso.datetime().nullable(),
    variables: z.record(z.string(), z.string()),
    recordingDurationMs: z.number().int().nullable(),
    /** Why a failed recording could not be kept (磁盘已满…); null unless recording is failed. */
    recordingError: z.string().nullable(),
    /** The call flow that answered the call and the path it took; null for calls without one. */
    flow: callFlowPath.nullable(),
  })
  .meta({ id: 'CallDetail' });
export type CallDetail = z.infer<typeof callDetail>;

const csv = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (value) =>
      typeof value === 'string' ? value.split(',').filter(Boolean) : Array.isArray(value) ? value : undefined,
    z.array(item).optional(),
  );

const seconds = (label: string) =>
  z.coerce
    .number({ error: `${label}须为数字` })
    .int({ error: `${label}须为整数` })
    .min(0, { error: `${label}不能小于 0` })
    .optional();

const yesNo = (label: string) => z.enum(['yes', 'no'], { error: `${label}须为 yes 或 no` }).optional();

export const callSortField = z.enum(['startedAt', 'talkSeconds', 'turnCount'], { error: '排序字段不支持' });

/**
 * The list's filter fields, before the cross-field checks: the open API's cursor list picks from
 * them (zod refuses omit/pick on a refined object) and applies the same checks.
 */
export const callFilterFields = z.object({
  from: z.iso.datetime({ error: '开始时间须为 ISO 8601 时间' }).optional(),
  to: z.iso.datetime({ error: '结束时间须为 ISO 8601 时间' }).optional(),
  direction: callDirection.optional(),
  endReason: csv(endReason),
  intentGrade: csv(z.enum(['A', 'B', 'C', 'D', 'none'], { error: '意向等级不支持' })),
  taskId: entityId('任务').optional(),
  assistantId: entityId('小助手').optional(),
  /** Part of the caller or callee number. */
  number: z
    .string()
    .trim()
    .regex(/^[0-9+\-*#]{0,20}$/, { error: '号码只能包含数字、+、-、*、#，最多 20 位' })
    .optional(),
  talkMin: seconds('最短通话时长'),
  talkMax: seconds('最长通话时长'),
  tags: csv(z.string().trim().min(1).max(20, { error: '标签不能超过 20 个字符' })),
  status: callStatus.optional(),
  // The reports' drill-down filters (数据统计): each figure links to the list with the filters that
  // reproduce its calls, so the list must express every metric's definition.
  /** The call flow that answered; `none`: calls no flow answered. */
  flowId: entityId('流程').optional(),
  /** Calls whose path passed this node of the flow itself (a subflow's own steps aside); with flowId. */
  flowNodeId: z.string().trim().min(1).max(64, { error: '流程节点不正确' }).optional(),
  /** The number of turns (对话轮次), inclusive bounds. */
  turnsMin: seconds('最少对话轮次'),
  turnsMax: seconds('最多对话轮次'),
  /** The published version of the assistant that talked (with assistantId; 0: draft test calls). */
  assistantVersion: seconds('小助手版本'),
  /** The project's number on the call, exact: the caller number outbound, the number dialled inbound. */
  lineNumber: z
    .string()
    .trim()
    .regex(/^[0-9+\-*#]{1,32}$/, { error: '线路号码只能包含数字、+、-、*、#，最多 32 位' })
    .optional(),
  /** Answered (has an answer time) or not. */
  answered: yesNo('是否接通'),
  /** An assistant talked: answered by an assistant that took a turn, or a flow call that reached an assistant node. */
  assistantTalked: yesNo('小助手是否接待'),
  /** Who hung up. */
  hangupBy: hangupBy.optional(),
  /** Transferred to a person. */
  transferred: yesNo('是否转人工'),
  /** A person re-graded the call (人工复核). */
  humanGraded: yesNo('是否人工复核'),
  /** Seconds from start to answer, rounded, inclusive bounds; answered calls only. */
  waitMin: seconds('最短等待时长'),
  waitMax: seconds('最长等待时长'),
  sort: callSortField.default('startedAt'),
  order: z.enum(['asc', 'desc'], { error: '排序方向须为 asc 或 desc' }).default('desc'),
});

/** The filters' cross-field rules: a time range and a talk-time range must not be reversed. */
export function checkCallFilterRanges(
  f: {
    from?: string;
    to?: string;
    talkMin?: number;
    talkMax?: number;
    waitMin?: number;
    waitMax?: number;
    turnsMin?: number;
    turnsMax?: number;
  },
  ctx: z.RefinementCtx,
) {
  if (f.turnsMin !== undefined && f.turnsMax !== undefined && f.turnsMin > f.turnsMax)
    ctx.addIssue({ code: 'custom', path: ['turnsMax'], message: '最多对话轮次不能小于最少对话轮次' });
  if (f.from && f.to && f.from > f.to)
    ctx.addIssue({ code: 'custom', path: ['to'], message: '结束时间不能早于开始时间' });
  if (f.talkMin !== undefined && f.talkMax !== undefined && f.talkMin > f.talkMax)
    ctx.addIssue({ code: 'custom', path: ['talkMax'], message: '最长通话时长不能小于最短通话时长' });
  if (f.waitMin !== undefined && f.waitMax !== undefined && f.waitMin > f.waitMax)
    ctx.addIssue({ code: 'custom', path: ['waitMax'], message: '最长等待时长不能小于最短等待时长' });
}

/** The list's filters; the export and previous/next use the same ones. Lists are comma-separated. */
export const callFilters = callFilterFields.superRefine(checkCallFilterRanges);
export type CallFilters = z.infer<typeof callFilters>;

export const callListQuery = z.intersection(pageQuery, callFilters);
export type CallListQuery = z.infer<typeof callListQuery>;
export const callList = paged(callSummary).meta({ id: 'CallList' });
export type CallList = z.infer<typeof callList>;

export const callExportQuery = z.intersection(
  callFilters,
  z.object({ format: z.enum(['csv', 'xlsx'], { error: '导出格式须为 csv 或 xlsx' }).default('csv') }),
);

export const callIdParams = z.object({ projectId: entityId('项目'), callId: entityId('通话') });

/** Previous and next calls of the same filtered, sorted list (the detail page's 上一条 / 下一条). */
export const callNeighbors = z.object({ previousId: z.string().nullable(), nextId: z.string().nullable() });

export const callGradeRequest = z.object({
  /** null clears the human grade, so the machine's counts again. */
  grade: intentGrade.nullable(),
});
export const callTagsRequest = z.object({
  tags: z
    .array(z.string().trim().min(1, { error: '标签不能为空' }).max(20, { error: '标签不能超过 20 个字符' }))
    .max(10, { error: '每通电话最多 10 个标签' }),
});

export const testCallRequest = z.object({
  assistantId: entityId('小助手'),
  /** Omit to call the draft as it is now; the record then has no version. */
  version: z.number().int().min(1).optional(),
  persona: simPersona,
  calleeNumber: z
    .string()
    .trim()
    .regex(/^$|^1[3-9]\d{9}$/, { error: '被叫号码须为 11 位手机号' })
    .default(''),
  variables: z.record(z.string(), optionalText('变量值', 200)).default({}),
});
export type TestCallRequest = z.infer<typeof testCallRequest>;
export const testCallStarted = z.object({ callId: z.string() });

/**
 * Personas who pick up and talk (or stay silent) once connected: the simulated carrier's talking
 * callees, and the callers of 模拟来电.
 */
export const TALKING_SIM_PERSONAS = [
  'interested',
  'hesitant',
  'refuses',
  'asks_question',
  'asks_human',
  'silent',
  'hangs_up',
] as const satisfies readonly SimPersona[];
/** Who can place a 模拟来电. */
export const INBOUND_SIM_PERSONAS = TALKING_SIM_PERSONAS;

/**
 * 模拟来电: a simulated caller dials one of the project's numbers; the call is routed as a real
 * inbound call would be (the number's binding, the project's concurrentCallin).
 */
export const testInboundCallRequest = z.object({
  number: z
    .string({ error: '请选择被叫号码' })
    .trim()
    .regex(/^[0-9+\-\s]{5,20}$/, { error: '号码格式不正确' }),
  persona: z.enum(TALKING_SIM_PERSONAS, { error: '模拟来电的客户类型不支持' }),
  /** The caller's number; a random mobile when empty. */
  callerNumber: z
    .string()
    .trim()
    .regex(/^$|^1[3-9]\d{9}$/, { error: '主叫号码须为 11 位手机号' })
    .default(''),
});
export type TestInboundCallRequest = z.infer<typeof testInboundCallRequest>;

/** Live events of the project's calls (server-sent events). */
export const callEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('started'), call: callSummary }),
  z.object({ type: z.literal('answered'), callId: z.string(), answeredAt: z.iso.datetime() }),
  z.object({ type: z.literal('turn'), callId: z.string(), turn: callTurn }),
  z.object({ type: z.literal('ended'), call: callSummary }),
  /** Later changes of an ended call: its analysis, recording, grade or tags. */
  z.object({ type: z.literal('updated'), call: callSummary }),
]);
export type CallEvent = z.infer<typeof callEvent>;
