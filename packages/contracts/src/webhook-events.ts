import { z } from 'zod';
import { callSummary } from './calls';
import type { WebhookEventType } from './developer';
import { taskCounts, taskState } from './tasks';

/**
 * The webhook event catalogue: every body a receiver can get is `{ type, timestamp, data }`
 * (the Standard Webhooks payload shape), with `data` as below. The console's catalogue shows
 * these schemas with their samples; the server builds bodies through `webhookPayload`.
 */

/** A call as events carry it: the record list's summary without the simulator's persona. */
export const webhookCallData = callSummary.omit({ persona: true }).meta({ id: 'WebhookCall' });
export type WebhookCallData = z.infer<typeof webhookCallData>;

export const webhookAnalysisData = webhookCallData
  .extend({
    gradeReason: z.string(),
    /** What the analysis extracted (意向产品, 预约时间, ...), as configured on the assistant. */
    fields: z.record(z.string(), z.string()),
    analysisBy: z.enum(['llm', 'rules']).nullable(),
  })
  .meta({ id: 'WebhookCallAnalysis' });

export const webhookRecordingData = z
  .object({
    callId: z.string(),
    durationMs: z.number().int(),
    /** Signed, works without a key until `recordingUrlExpiresAt` (then GET the call again for a fresh one). */
    recordingUrl: z.string(),
    recordingUrlExpiresAt: z.iso.datetime(),
  })
  .meta({ id: 'WebhookRecording' });

export const webhookTaskData = z
  .object({
    id: z.string(),
    name: z.string(),
    state: taskState,
    previousState: taskState.nullable(),
    counts: taskCounts,
    progress: z.number(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WebhookTask' });

export const webhookOptOutData = z
  .object({
    phone: z.string(),
    /** 'call': the callee asked not to be called again during a call; 'api' / 'console': added there. */
    source: z.enum(['call', 'console', 'api']),
    callId: z.string().nullable(),
    taskId: z.string().nullable(),
    contactId: z.string().nullable(),
    at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookOptOut' });

export const webhookSmsData = z
  .object({
    smsId: z.string(),
    phone: z.string(),
    status: z.enum(['delivered', 'failed']),
    at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookSms' });

export const WEBHOOK_EVENT_DATA = {
  'call.started': webhookCallData,
  'call.ringing': webhookCallData,
  'call.answered': webhookCallData,
  'call.ended': webhookCallData,
  'call.analyzed': webhookAnalysisData,
  'call.recording_ready': webhookRecordingData,
  'task.state_changed': webhookTaskData,
  'task.finished': webhookTaskData,
  'contact.opted_out': webhookOptOutData,
  'sms.delivered': webhookSmsData,
} as const satisfies Record<WebhookEventType, z.ZodType>;

export type WebhookEventData<T extends WebhookEventType> = z.infer<(typeof WEBHOOK_EVENT_DATA)[T]>;

export interface WebhookPayload<T extends WebhookEventType = WebhookEventType> {
  type: T;
  /** When the event happened (ISO 8601), not when this attempt was sent. */
  timestamp: string;
  data: WebhookEventData<T>;
}

export const webhookPayload = <T extends WebhookEventType>(
  type: T,
  data: WebhookEventData<T>,
  at: Date,
): WebhookPayload<T> => ({ type, timestamp: at.toISOString(), data });

export const WEBHOOK_EVENT_CATALOGUE: Record<
  WebhookEventType,
  { label: string; description: string; available: boolean }
> = {
  'call.started': {
    label: '通话开始',
    description: '开始拨号（呼出）或来电进入（呼入），通话记录已生成。',
    available: true,
  },
  'call.ringing': { label: '对方振铃', description: '运营商回报被叫正在振铃。', available: true },
  'call.answered': {
    label: '通话接通',
    description: '被叫接听（呼出）或系统应答（呼入）。',
    available: true,
  },
  'call.ended': {
    label: '通话结束',
    description: '通话结束，带结束原因、挂断方与通话时长；未接通的呼叫也会发送。',
    available: true,
  },
  'call.analyzed': {
    label: '通话分析完成',
    description: '意向等级、等级理由、摘要与提取字段已生成（人工复核改变等级时也会再次发送）。',
    available: true,
  },
  'call.recording_ready': {
    label: '录音就绪',
    description: '录音已合成，可用带签名的地址下载。',
    available: true,
  },
  'task.state_changed': {
    label: '任务状态变化',
    description: '呼出任务开始、暂停、继续、停止或完成时发送。',
    available: true,
  },
  'task.finished': {
    label: '任务结束',
    description: '呼出任务完成（所有联系人已处理）或被停止，带最终统计。',
    available: true,
  },
  'contact.opted_out': {
    label: '客户拒绝再联系',
    description: '号码加入免打扰名单：通话中客户明确拒绝，或经控制台、开放接口添加。',
    available: true,
  },
  'sms.delivered': {
    label: '短信送达',
    description: '短信回执：运营商报告送达或失败（服务商推送或平台查询所得）。',
    available: true,
  },
};

const sampleCall: WebhookCallData = {
  id: 'c6f1d2a4-3b5e-4c7d-9e8f-0a1b2c3d4e5f',
  direction: 'outbound',
  callerNumber: '02160881001',
  calleeNumber: '13800138000',
  taskId: 'task_7Yb2kq',
  taskName: '11 月会员续费回访',
  contactId: 'ct_19Qa3m',
  contactName: '张先生',
  assistantId: 'ast_5Kd8Lp',
  assistantName: '会员续费助手',
  assistantVersion: 3,
  status: 'ended',
  endReason: 'completed',
  hangupBy: 'assistant',
  startedAt: '2026-11-24T02:30:00.000Z',
  answeredAt: '2026-11-24T02:30:06.000Z',
  endedAt: '2026-11-24T02:31:48.000Z',
  talkSeconds: 102,
  turnCount: 9,
  intentGrade: 'A',
  machineGrade: 'A',
  humanGrade: null,
  tags: ['有意向'],
  summary: '客户同意续费年卡，约定周五下午再确认支付方式。',
  recording: 'ready',
};

const sampleTask = {
  id: 'task_7Yb2kq',
  name: '11 月会员续费回访',
  state: 'completed' as const,
  previousState: 'running' as const,
  counts: {
    total: 1200,
    waiting: 0,
    dialing: 0,
    finished: 1200,
    answered: 860,
    skipped: 12,
    calls: 1530,
    byEndReason: { completed: 760, callee_hangup: 100, no_answer: 420, busy: 250 },
    byGrade: { A: 120, B: 260, C: 300, D: 180 },
  },
  progress: 1,
  startedAt: '2026-11-24T01:00:00.000Z',
  finishedAt: '2026-11-24T09:12:00.000Z',
};

/** A sample of every event (the catalogue and 发送测试事件 send these, marked as tests). */
export const WEBHOOK_EVENT_SAMPLES: { [T in WebhookEventType]: WebhookEventData<T> } = {
  'call.started': {
    ...sampleCall,
    status: 'ringing',
    endReason: null,
    hangupBy: null,
    answeredAt: null,
    endedAt: null,
    talkSeconds: 0,
    turnCount: 0,
    intentGrade: null,
    machineGrade: null,
    tags: [],
    summary: '',
    recording: 'none',
  },
  'call.ringing': {
    ...sampleCall,
    status: 'ringing',
    endReason: null,
    hangupBy: null,
    answeredAt: null,
    endedAt: null,
    talkSeconds: 0,
    turnCount: 0,
    intentGrade: null,
    machineGrade: null,
    tags: [],
    summary: '',
    recording: 'none',
  },
  'call.answered': {
    ...sampleCall,
    status: 'in_progress',
    endReason: null,
    hangupBy: null,
    endedAt: null,
    talkSeconds: 0,
    turnCount: 0,
    intentGrade: null,
    machineGrade: null,
    tags: [],
    summary: '',
    recording: 'none',
  },
  'call.ended': { ...sampleCall, intentGrade: null, machineGrade: null, summary: '', recording: 'pending' },
  'call.analyzed': {
    ...sampleCall,
    gradeReason: '客户明确表示愿意续费并约定了时间。',
    fields: { 意向产品: '年卡', 预约时间: '周五下午' },
    analysisBy: 'llm',
  },
  'call.recording_ready': {
    callId: sampleCall.id,
    durationMs: 108_000,
    recordingUrl:
      'https://callpilot.example.com/api/recordings/c6f1d2a4-3b5e-4c7d-9e8f-0a1b2c3d4e5f?expires=1764039600&sig=3q2-7w',
    recordingUrlExpiresAt: '2026-11-25T02:31:50.000Z',
  },
  'task.state_changed': {
    ...sampleTask,
    state: 'paused',
    previousState: 'running',
    counts: {
      total: 1200,
      waiting: 690,
      dialing: 0,
      finished: 510,
      answered: 371,
      skipped: 5,
      calls: 640,
      byEndReason: { completed: 330, callee_hangup: 41, no_answer: 170, busy: 99 },
      byGrade: { A: 52, B: 110, C: 129, D: 80 },
    },
    progress: 0.425,
    finishedAt: null,
  },
  'task.finished': sampleTask,
  'contact.opted_out': {
    phone: '13800138000',
    source: 'call',
    callId: sampleCall.id,
    taskId: sampleCall.taskId,
    contactId: sampleCall.contactId,
    at: '2026-11-24T02:31:40.000Z',
  },
  'sms.delivered': {
    smsId: 'sms_3Fh8Wq',
    phone: '13800138000',
    status: 'delivered',
    at: '2026-11-24T02:33:00.000Z',
  },
};
