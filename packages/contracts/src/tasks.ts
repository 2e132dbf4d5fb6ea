import { z } from 'zod';
import { intentGrade } from './assistants';
import { endReason } from './calls';
import { entityId, optionalText, paged, pageQuery, requiredText } from './common';

/** 外显号码: the numbers a project may show to callees. */
export const projectNumber = z
  .object({
    number: z.string(),
    label: z.string(),
    enabled: z.boolean(),
    /** The assistant whose published version answers calls to this number (呼入), if any. */
    inboundAssistantId: z.string().nullable(),
    inboundAssistantName: z.string().nullable(),
    /** Or the call flow (通话流程) whose published version answers them; a number has one or the other. */
    inboundFlowId: z.string().nullable(),
    inboundFlowName: z.string().nullable(),
    /** The SIP trunk its calls go through; null: the simulated carrier (模拟线路). */
    trunkId: z.string().nullable(),
    trunkName: z.string().nullable(),
    /** 休息中 since: tasks place no calls from it; it still answers inbound calls. */
    restingSince: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'ProjectNumber' });
export type ProjectNumber = z.infer<typeof projectNumber>;
export const projectNumberWriteRequest = z.object({
  number: z
    .string({ error: '请输入号码' })
    .trim()
    .regex(/^[0-9+\-\s]{5,20}$/, { error: '号码格式不正确' }),
  label: optionalText('备注', 50).default(''),
  enabled: z.boolean().default(true),
  /** One of the project's SIP trunks; null or absent: the simulated carrier (模拟线路). */
  trunkId: entityId('线路').nullable().default(null),
});

/**
 * Binds a number's inbound calls to an assistant or a call flow (its published version answers),
 * or unbinds it (both null). Naming both is refused.
 */
export const projectNumberInboundRequest = z
  .object({
    assistantId: entityId('小助手').nullable().default(null),
    flowId: entityId('通话流程').nullable().default(null),
  })
  .refine((v) => !(v.assistantId && v.flowId), { error: '一个号码只能绑定小助手或通话流程中的一个' });
export type ProjectNumberInboundRequest = z.infer<typeof projectNumberInboundRequest>;

export const taskState = z.enum(['draft', 'pending', 'running', 'paused', 'completed', 'stopped'], {
  error: '任务状态不支持',
});
export type TaskState = z.infer<typeof taskState>;
export const TASK_STATE_LABELS: Record<TaskState, string> = {
  draft: '草稿',
  pending: '待开始',
  running: '进行中',
  paused: '已暂停',
  completed: '已完成',
  stopped: '已停止',
};

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$|^24:00$/;
export const callingWindow = z
  .object({
    /** ISO weekdays: 1 Monday … 7 Sunday. */
    days: z
      .array(z.number().int().min(1).max(7), { error: '请选择星期' })
      .min(1, { error: '请至少选择一天' })
      .max(7),
    start: z.string().regex(HHMM, { error: '开始时间格式须为 HH:mm' }),
    end: z.string().regex(HHMM, { error: '结束时间格式须为 HH:mm' }),
  })
  .refine((w) => w.start < w.end, { error: '时段的结束时间须晚于开始时间', path: ['end'] });
export type CallingWindow = z.infer<typeof callingWindow>;

export const DEFAULT_WINDOWS: CallingWindow[] = [
  { days: [1, 2, 3, 4, 5], start: '09:00', end: '12:00' },
  { days: [1, 2, 3, 4, 5], start: '14:00', end: '20:00' },
];

/** Outcomes a retry rule can name; `interrupted` is a call cut off by a crash (系统中断). */
export const retryOutcome = z.enum([
  'no_answer',
  'busy',
  'powered_off',
  'rejected',
  'vacant',
  'voicemail',
  'failed',
  'interrupted',
]);
export type RetryOutcome = z.infer<typeof retryOutcome>;
export const retryRule = z.object({
  /** Further attempts after the first call ended this way (0: no retry). */
  maxRetries: z
    .number()
    .int()
    .min(0, { error: '重拨次数不能小于 0' })
    .max(5, { error: '重拨次数不能超过 5' }),
  intervalMinutes: z
    .number()
    .int()
    .min(1, { error: '重拨间隔至少 1 分钟' })
    .max(7 * 24 * 60, { error: '重拨间隔不能超过 7 天' }),
});
export type RetryRule = z.infer<typeof retryRule>;
export const DEFAULT_RETRY_RULES: Partial<Record<RetryOutcome, RetryRule>> = {
  no_answer: { maxRetries: 2, intervalMinutes: 60 },
  busy: { maxRetries: 2, intervalMinutes: 30 },
  powered_off: { maxRetries: 1, intervalMinutes: 120 },
  rejected: { maxRetries: 1, intervalMinutes: 240 },
  failed: { maxRetries: 1, intervalMinutes: 10 },
  interrupted: { maxRetries: 1, intervalMinutes: 5 },
};

export const taskSettings = z
  .object({
    name: requiredText('任务名称', 50),
    assistantId: entityId('小助手'),
    /** A published version; omitted means the live published version at the time of saving. */
    assistantVersion: z.number().int().min(1).optional(),
    callerNumbers: z.array(z.string().trim().min(1)).max(20, { error: '外显号码最多 20 个' }).default([]),
    /** China-time calendar dates (YYYY-MM-DD), inclusive. */
    startDate: z.iso.date({ error: '开始日期格式须为 YYYY-MM-DD' }),
    endDate: z.iso.date({ error: '结束日期格式须为 YYYY-MM-DD' }),
    windows: z
      .array(callingWindow)
      .min(1, { error: '请至少设置一个呼叫时段' })
      .max(10, { error: '呼叫时段最多 10 个' }),
    /** Skip Chinese public holidays and call on their make-up workdays (调休). */
    skipHolidays: z.boolean().default(true),
    concurrency: z
      .number({ error: '并发数须为数字' })
      .int({ error: '并发数须为整数' })
      .min(1, { error: '并发数至少为 1' })
      .max(500, { error: '并发数不能超过 500' }),
    retryRules: z.partialRecord(retryOutcome, retryRule).default(DEFAULT_RETRY_RULES),
    /** Calls to one number per China-time day across the whole project (0: no cap). */
    dailyCapPerNumber: z.number().int().min(0).max(20, { error: '每号码每日呼叫上限不能超过 20' }).default(2),
  })
  .refine((s) => s.startDate <= s.endDate, { error: '结束日期不能早于开始日期', path: ['endDate'] });
export type TaskSettings = z.infer<typeof taskSettings>;

export const taskCounts = z.object({
  total: z.number().int(),
  /** Not yet called or waiting for a retry. */
  waiting: z.number().int(),
  dialing: z.number().int(),
  /** Reached a final state (answered, or attempts used up, or skipped). */
  finished: z.number().int(),
  answered: z.number().int(),
  skipped: z.number().int(),
  calls: z.number().int(),
  byEndReason: z.partialRecord(endReason, z.number().int()),
  byGrade: z.partialRecord(intentGrade, z.number().int()),
});
export type TaskCounts = z.infer<typeof taskCounts>;

export const taskSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    state: taskState,
    assistantId: z.string().nullable(),
    assistantName: z.string(),
    assistantVersion: z.number().int().nullable(),
    startDate: z.string(),
    endDate: z.string(),
    concurrency: z.number().int(),
    counts: taskCounts,
    /** 0-1 share of contacts in a final state. */
    progress: z.number(),
    /** When the task waits outside its calling windows: the next moment it may call. */
    waitingUntil: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'TaskSummary' });
export type TaskSummary = z.infer<typeof taskSummary>;

export const taskDetail = taskSummary
  .extend({
    settings: taskSettings,
    /** Calls of this task in progress right now. */
    activeCalls: z.number().int(),
    /** Estimated seconds to finish at the current concurrency; null when unknown or done. */
    etaSeconds: z.number().int().nullable(),
    answerRate: z.number().nullable(),
    importRejected: z.number().int(),
  })
  .meta({ id: 'TaskDetail' });
export type TaskDetail = z.infer<typeof taskDetail>;

export const taskListQuery = pageQuery.extend({
  name: z.string().trim().max(50).optional(),
  state: taskState.optional(),
  assistantId: entityId('小助手').optional(),
  from: z.iso.datetime().optional(),
  to: z.iso.datetime().optional(),
});
export const taskList = paged(taskSummary).meta({ id: 'TaskList' });

export const taskIdParams = z.object({ projectId: entityId('项目'), taskId: entityId('任务') });

export const taskAction = z.enum(['start', 'pause', 'resume', 'stop'], { error: '任务操作不支持' });
export type TaskAction = z.infer<typeof taskAction>;

export const taskPreflight = z
  .object({
    contacts: z.number().int(),
    /** contacts × (1 + the largest retry count): the most calls the task can make. */
    maxCalls: z.number().int(),
    expectedCalls: z.number().int(),
    /** At the chosen concurrency with the average call length, counting only calling windows. */
    expectedSeconds: z.number().int(),
    expectedFinishAt: z.iso.datetime().nullable(),
    concurrency: z.number().int(),
    /** The project's concurrentCallout when balance limits apply, else null (no cap). */
    projectConcurrency: z.number().int().nullable(),
    balanceOk: z.boolean(),
    problems: z.array(z.string()),
    /** Worth knowing but not blocking the start (e.g. no caller number: the default one is used). */
    notes: z.array(z.string()).optional(),
  })
  .meta({ id: 'TaskPreflight' });
export type TaskPreflight = z.infer<typeof taskPreflight>;

export const contactStatus = z.enum(['pending', 'dialing', 'retry', 'done', 'failed', 'skipped'], {
  error: '联系人状态不支持',
});
export type ContactStatus = z.infer<typeof contactStatus>;
export const CONTACT_STATUS_LABELS: Record<ContactStatus, string> = {
  pending: '待呼叫',
  dialing: '呼叫中',
  retry: '等待重拨',
  done: '已完成',
  failed: '未接通（已用完重拨）',
  skipped: '已跳过',
};

export const taskContact = z
  .object({
    id: z.string(),
    phone: z.string(),
    name: z.string(),
    variables: z.record(z.string(), z.string()),
    status: contactStatus,
    attempts: z.number().int(),
    nextAttemptAt: z.iso.datetime().nullable(),
    lastEndReason: endReason.nullable(),
    lastCallId: z.string().nullable(),
    skipReason: z.string().nullable(),
    intentGrade: intentGrade.nullable(),
  })
  .meta({ id: 'TaskContact' });
export type TaskContact = z.infer<typeof taskContact>;
export const taskContactListQuery = pageQuery.extend({
  status: contactStatus.optional(),
  phone: z.string().trim().max(20).optional(),
});
export const taskContactList = paged(taskContact).meta({ id: 'TaskContactList' });

/** How the columns of an uploaded sheet map onto a contact. */
export const columnMapping = z.object({
  phone: requiredText('号码列', 100),
  name: optionalText('姓名列', 100).default(''),
  /** Assistant variable → column header. */
  variables: z.record(z.string(), z.string()).default({}),
});
export type ColumnMapping = z.infer<typeof columnMapping>;

/** What an upload holds before it is committed: headers, a sample and the counts. */
export const importPreview = z
  .object({
    importId: z.string(),
    fileName: z.string(),
    headers: z.array(z.string()),
    sample: z.array(z.record(z.string(), z.string())),
    rows: z.number().int(),
    valid: z.number().int(),
    invalid: z.number().int(),
    duplicates: z.number().int(),
    doNotCall: z.number().int(),
    /** The mapping used for the counts (guessed from headers when not given). */
    mapping: columnMapping,
  })
  .meta({ id: 'ImportPreview' });
export type ImportPreview = z.infer<typeof importPreview>;

export const importRejectKind = z.enum(['invalid', 'duplicate', 'do_not_call']);
export const IMPORT_REJECT_LABELS: Record<z.infer<typeof importRejectKind>, string> = {
  invalid: '号码无效',
  duplicate: '重复号码',
  do_not_call: '免打扰号码',
};

export const pasteImportRequest = z.object({
  /** One number per line, optionally followed by a comma or tab and a name. */
  text: z.string().max(2_000_000, { error: '粘贴内容过长，请改为上传文件' }),
});
export const importCommitRequest = z.object({ importId: entityId('导入'), mapping: columnMapping });
export const importResult = z
  .object({
    added: z.number().int(),
    invalid: z.number().int(),
    duplicates: z.number().int(),
    doNotCall: z.number().int(),
  })
  .meta({ id: 'ImportResult' });

/** Live task events (server-sent events) for the task detail page. */
export const taskEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('task'), task: taskSummary.extend({ activeCalls: z.number().int() }) }),
]);
export type TaskEvent = z.infer<typeof taskEvent>;
