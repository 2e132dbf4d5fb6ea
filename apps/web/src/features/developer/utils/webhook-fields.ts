import {
  WEBHOOK_EVENT_CATALOGUE,
  WEBHOOK_EVENT_DATA,
  WEBHOOK_EVENT_SAMPLES,
  type WebhookEventType,
  webhookEventType,
} from '@callpilot/contracts';
import { pointerResolver, type SchemaField, schemaFields } from './json-schema';

/**
 * What each field of an event's `data` means, for the catalogue. The schema's own description
 * comes first; these fill in the fields the contracts describe only in code comments.
 */
const FIELD_DESCRIPTIONS: Record<string, string> = {
  id: '对象 ID（通话 ID 或任务 ID）',
  direction: '呼叫方向：outbound 呼出，inbound 呼入',
  callerNumber: '主叫号码（呼出时为项目号码）',
  calleeNumber: '被叫号码（呼出时为客户号码）',
  taskId: '所属呼出任务 ID；单通外呼和呼入为 null',
  taskName: '所属呼出任务名称',
  contactId: '任务联系人 ID',
  contactName: '联系人姓名',
  assistantId: '接待的智能小助手 ID；由通话流程接待时为 null',
  assistantName: '智能小助手名称',
  assistantVersion: '使用的小助手发布版本号',
  status: '通话状态：ringing 拨号中，in_progress 通话中，ended 已结束',
  endReason: '结束原因（completed 正常结束、no_answer 无人接听、busy 忙线等）；未结束时为 null',
  hangupBy: '挂断方：assistant 小助手，callee 客户，system 系统',
  startedAt: '开始拨号（或来电进入）的时间，ISO 8601',
  answeredAt: '接通时间；未接通为 null',
  endedAt: '结束时间；未结束为 null',
  talkSeconds: '通话时长（秒，从接通算起）',
  turnCount: '对话轮数',
  intentGrade: '意向等级 A–D（有人工复核时以人工为准）',
  machineGrade: '机器分析给出的意向等级',
  humanGrade: '人工复核的意向等级；未复核为 null',
  tags: '通话标签',
  summary: '通话摘要',
  recording: '录音状态：none 无，pending 合成中，ready 可下载，failed 失败',
  gradeReason: '给出该意向等级的理由',
  fields: '按小助手配置提取的字段（如 意向产品、预约时间），键值均为文本',
  analysisBy: '分析方式：llm 大模型，rules 规则',
  callId: '通话 ID',
  durationMs: '录音时长（毫秒）',
  recordingUrl: '带签名的录音下载地址，无需密钥；过期后请重新获取通话详情',
  recordingUrlExpiresAt: '录音地址的过期时间',
  name: '任务名称',
  state: '任务状态：pending 等待开始，running 进行中，paused 已暂停，completed 已完成，stopped 已停止',
  previousState: '变化前的任务状态',
  counts: '任务统计',
  'counts.total': '联系人总数',
  'counts.waiting': '待呼叫（含等待重呼）的联系人数',
  'counts.dialing': '正在呼叫的联系人数',
  'counts.finished': '已处理完的联系人数（接通、重呼用尽或跳过）',
  'counts.answered': '已接通的联系人数',
  'counts.skipped': '跳过的联系人数（如免打扰）',
  'counts.calls': '已拨打的通话数（含重呼）',
  'counts.byEndReason': '按结束原因统计的通话数',
  'counts.byGrade': '按意向等级统计的通话数',
  progress: '进度，0 到 1',
  finishedAt: '结束时间；未结束为 null',
  phone: '号码',
  source: '来源：call 通话中客户拒绝，console 控制台添加，api 开放接口添加',
  at: '发生时间，ISO 8601',
  smsId: '短信 ID',
};

/** Every field of the event's `data`, with its type and what it means. */
export function webhookEventFields(type: WebhookEventType): SchemaField[] {
  const schema = WEBHOOK_EVENT_DATA[type].toJSONSchema() as Record<string, unknown>;
  // The id'd schemas come back as `$ref` into `$defs`, resolved against the same document.
  return schemaFields(schema, pointerResolver(schema), (name) => FIELD_DESCRIPTIONS[name]);
}

/** The whole body a receiver gets for an event: `{ type, timestamp, data }`. */
export function webhookEventSample(type: WebhookEventType) {
  return { type, timestamp: '2026-11-24T02:31:50.000Z', data: WEBHOOK_EVENT_SAMPLES[type] };
}

export type WebhookEventGroup = { label: string; types: WebhookEventType[] };

const GROUP_LABELS: Record<string, string> = { call: '通话', task: '任务', contact: '联系人', sms: '短信' };

/** The event types by their prefix (通话 / 任务 / 联系人 / 短信), in the catalogue's order. */
export const WEBHOOK_EVENT_GROUPS: WebhookEventGroup[] = webhookEventType.options.reduce<WebhookEventGroup[]>(
  (groups, type) => {
    const label = GROUP_LABELS[type.split('.')[0] ?? ''] ?? '其他';
    const group = groups.find((candidate) => candidate.label === label);
    if (group) group.types.push(type);
    else groups.push({ label, types: [type] });
    return groups;
  },
  [],
);

/** Types an endpoint can subscribe to today (SMS events come with 短信管理). */
export const AVAILABLE_EVENT_TYPES = webhookEventType.options.filter(
  (type) => WEBHOOK_EVENT_CATALOGUE[type].available,
);

export const eventLabel = (type: WebhookEventType) => WEBHOOK_EVENT_CATALOGUE[type]?.label ?? type;
