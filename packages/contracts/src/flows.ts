import { z } from 'zod';
import { assistantVoice } from './assistants';
import { entityId, optionalText, pageQuery, requiredText } from './common';

/**
 * 通话流程 (IVR call flows): the graph the editor draws, the interpreter runs and the call record
 * shows. Drafts are lenient (every setting has a default, an unfinished node saves); what makes a
 * flow safe to run is `validateFlow` (flow-rules.ts), strict on publish.
 */

export const FLOW_NODE_TYPES = [
  'start',
  'play',
  'menu',
  'collect',
  'speech',
  'condition',
  'assistant',
  'transfer',
  'voicemail',
  'sms',
  'http',
  'set',
  'subflow',
  'return',
  'hangup',
] as const;
export const flowNodeType = z.enum(FLOW_NODE_TYPES, { error: '节点类型不支持' });
export type FlowNodeType = z.infer<typeof flowNodeType>;
export const FLOW_NODE_LABELS: Record<FlowNodeType, string> = {
  start: '开始',
  play: '放音',
  menu: '按键菜单',
  collect: '收号',
  speech: '语音识别',
  condition: '条件分支',
  assistant: '转智能小助手',
  transfer: '转接',
  voicemail: '留言',
  sms: '发送短信',
  http: 'HTTP 请求',
  set: '设置变量',
  subflow: '子流程',
  return: '返回上级流程',
  hangup: '挂机',
};

/**
 * Flow variable names: like assistant variables, plus dots for the system namespaces
 * (`http.status`, `assistant.grade`). Referenced in texts as `{{name}}`.
 */
export const FLOW_VARIABLE_NAME_PATTERN = /^[\p{L}_][\p{L}\p{N}_]{0,31}(\.[\p{L}\p{N}_]{1,32})?$/u;
export const FLOW_VARIABLE_REFERENCE_PATTERN =
  /\{\{\s*([\p{L}_][\p{L}\p{N}_]{0,31}(?:\.[\p{L}\p{N}_]{1,32})?)\s*\}\}/gu;
export const flowVariableName = (label = '变量名') =>
  z
    .string({ error: `请输入${label}` })
    .trim()
    .regex(FLOW_VARIABLE_NAME_PATTERN, {
      error: `${label}须以汉字、字母或下划线开头，由汉字、字母、数字或下划线组成，最多 32 个字符`,
    });

/** Variables every flow call has; the editor autocompletes them beside the flow's own. */
export const SYSTEM_FLOW_VARIABLES = [
  { name: 'caller', label: '主叫号码' },
  { name: 'callee', label: '被叫号码' },
  { name: 'call_id', label: '通话 ID' },
  { name: 'now', label: '当前时间（YYYY-MM-DD HH:mm）' },
  { name: 'date', label: '当前日期（YYYY-MM-DD）' },
  { name: 'time', label: '当前时刻（HH:mm）' },
  { name: 'weekday', label: '星期（1-7）' },
  { name: 'digits', label: '最近一次按键' },
  { name: 'speech', label: '最近一次识别的话' },
  { name: 'http.status', label: 'HTTP 状态码（最近一次请求）' },
  { name: 'http.ms', label: 'HTTP 耗时毫秒（最近一次请求）' },
  { name: 'assistant.grade', label: '小助手意向等级（A/B/C/D）' },
  { name: 'assistant.outcome', label: '小助手结束方式（completed/transfer/…）' },
  { name: 'transfer.outcome', label: '转接结果（busy/no_answer/failed）' },
  { name: 'voicemail.seconds', label: '留言时长（秒）' },
] as const;
export const SYSTEM_FLOW_VARIABLE_NAMES: ReadonlySet<string> = new Set(
  SYSTEM_FLOW_VARIABLES.map((v) => v.name),
);

/** Fills `{{name}}` from `variables`; unknown names become empty (a caller never hears braces). */
export function renderFlowTemplate(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(FLOW_VARIABLE_REFERENCE_PATTERN, (_, name: string) => variables[name] ?? '');
}

/** The variable names a text references, in order of first use. */
export function flowTemplateVariables(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(FLOW_VARIABLE_REFERENCE_PATTERN)) {
    const name = match[1] as string;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

const seconds = (label: string, min: number, max: number, fallback: number) =>
  z
    .number({ error: `${label}须为数字` })
    .int({ error: `${label}须为整数` })
    .min(min, { error: `${label}不能少于 ${min} 秒` })
    .max(max, { error: `${label}不能超过 ${max} 秒` })
    .default(fallback);
const retries = (fallback: number) =>
  z
    .number({ error: '重试次数须为数字' })
    .int({ error: '重试次数须为整数' })
    .min(0, { error: '重试次数不能小于 0' })
    .max(5, { error: '重试次数不能超过 5' })
    .default(fallback);
const prompt = (label: string, fallback = '') => optionalText(label, 1000).default(fallback);
/** Short ids of branches, options and intents inside one node (exit handles are built from them). */
const localId = z
  .string({ error: '缺少分支标识' })
  .regex(/^[A-Za-z0-9_-]{1,24}$/, { error: '分支标识须为 1-24 个字母、数字、- 或 _' });
const hhmm = (label: string) =>
  z
    .string({ error: `请输入${label}` })
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: `${label}须为 HH:mm 格式` });
const isoDate = (label: string) =>
  z
    .string({ error: `请输入${label}` })
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: `${label}须为 YYYY-MM-DD 格式` });
const weekdays = z
  .array(z.number().int().min(1, { error: '星期须为 1-7' }).max(7, { error: '星期须为 1-7' }), {
    error: '请选择星期',
  })
  .max(7);

export const startNodeData = z.object({});

export const playNodeData = z.object({
  /** Spoken with the flow's voice, `{{variables}}` filled in. */
  text: prompt('放音内容'),
  /** An uploaded audio file (flow audio) played instead of the text when set. */
  audioId: z.string().max(64).nullable().default(null),
  interruptible: z.boolean().default(true),
});

export const MENU_KEY_PATTERN = /^[0-9*]{1,4}$/;
export const menuOption = z.object({
  key: z.string({ error: '请输入按键' }).regex(MENU_KEY_PATTERN, { error: '按键须为 1-4 位数字或 *' }),
  label: optionalText('选项说明', 40).default(''),
});
export const menuNodeData = z.object({
  prompt: prompt('菜单提示音'),
  options: z.array(menuOption).max(12, { error: '按键选项最多 12 个' }).default([]),
  timeoutSec: seconds('按键等待时长', 1, 60, 5),
  maxRetries: retries(2),
  invalidPrompt: prompt('按键错误提示', '您的按键有误，请重新选择。'),
  timeoutPrompt: prompt('超时提示', '抱歉，没有收到您的按键。'),
  /** Replays the menu without counting a retry; '' none. */
  repeatKey: z
    .string()
    .regex(/^$|^[0-9*#]$/, { error: '重听键须为一个按键' })
    .default('*'),
  interruptible: z.boolean().default(true),
});

export const collectNodeData = z.object({
  prompt: prompt('收号提示音'),
  /** The variable the digits go into. */
  variable: flowVariableName('保存到变量').default('digits_input'),
  minDigits: z.number().int().min(1, { error: '最少位数至少为 1' }).max(32).default(1),
  maxDigits: z.number().int().min(1).max(32, { error: '最多位数不能超过 32' }).default(11),
  /** `#` ends the input before maxDigits. */
  finishOnHash: z.boolean().default(true),
  timeoutSec: seconds('收号等待时长', 1, 60, 8),
  /** A JavaScript regular expression the digits must match ('' any). */
  pattern: optionalText('校验规则', 200).default(''),
  maxRetries: retries(2),
  invalidPrompt: prompt('输入错误提示', '您的输入有误，请重新输入。'),
  timeoutPrompt: prompt('超时提示', '抱歉，没有收到您的输入。'),
});

export const speechIntent = z.object({
  id: localId,
  name: requiredText('意图名称', 20),
  /** Any of these in what the caller said matches the intent. */
  keywords: z.array(requiredText('关键词', 20)).max(50, { error: '关键词最多 50 个' }).default([]),
});
export const speechNodeData = z.object({
  prompt: prompt('提问内容'),
  variable: flowVariableName('保存到变量').default('speech_input'),
  intents: z.array(speechIntent).max(20, { error: '意图最多 20 个' }).default([]),
  timeoutSec: seconds('等待时长', 1, 60, 6),
  maxRetries: retries(1),
  retryPrompt: prompt('未识别提示', '抱歉，我没有听清，请再说一遍。'),
});

export const conditionOperator = z.enum([
  'eq',
  'neq',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'regex',
  'empty',
  'not_empty',
  'gt',
  'gte',
  'lt',
  'lte',
]);
export type ConditionOperator = z.infer<typeof conditionOperator>;
export const CONDITION_OPERATOR_LABELS: Record<ConditionOperator, string> = {
  eq: '等于',
  neq: '不等于',
  contains: '包含',
  not_contains: '不包含',
  starts_with: '开头是',
  ends_with: '结尾是',
  regex: '匹配正则',
  empty: '为空',
  not_empty: '不为空',
  gt: '大于',
  gte: '大于等于',
  lt: '小于',
  lte: '小于等于',
};
export const businessWindow = z.object({
  days: weekdays.default([1, 2, 3, 4, 5]),
  start: hhmm('开始时间').default('09:00'),
  end: hhmm('结束时间').default('18:00'),
});
export const conditionRule = z.discriminatedUnion(
  'kind',
  [
    z.object({
      kind: z.literal('variable'),
      variable: flowVariableName(),
      op: conditionOperator.default('eq'),
      /** A template: `{{other}}` compares two variables. */
      value: optionalText('比较值', 200).default(''),
    }),
    z.object({
      kind: z.literal('caller'),
      /** prefix / regex on the caller number; region: province or city name (固话区号、手机号段); mobile / landline. */
      op: z.enum(['prefix', 'regex', 'region', 'mobile', 'landline']).default('prefix'),
      value: optionalText('号码条件', 200).default(''),
    }),
    z.object({
      kind: z.literal('time'),
      /** China time; end exclusive; start after end spans midnight. */
      start: hhmm('开始时间').default('09:00'),
      end: hhmm('结束时间').default('18:00'),
    }),
    z.object({ kind: z.literal('weekday'), days: weekdays.default([1, 2, 3, 4, 5]) }),
    z.object({
      kind: z.literal('business_hours'),
      windows: z
        .array(businessWindow)
        .max(14)
        .default([{ days: [1, 2, 3, 4, 5], start: '09:00', end: '18:00' }]),
      /** Public holidays closed, 调休 workdays open with the weekday windows (China's calendar). */
      holidays: z.enum(['closed', 'ignore']).default('closed'),
    }),
    z.object({
      kind: z.literal('date_range'),
      from: isoDate('开始日期'),
      to: isoDate('结束日期'),
    }),
  ],
  { error: '条件类型不支持' },
);
export type ConditionRule = z.infer<typeof conditionRule>;
export const conditionBranch = z.object({
  id: localId,
  name: requiredText('分支名称', 20),
  match: z.enum(['all', 'any']).default('all'),
  rules: z.array(conditionRule).max(20, { error: '每个分支最多 20 条条件' }).default([]),
});
export const conditionNodeData = z.object({
  branches: z.array(conditionBranch).max(10, { error: '分支最多 10 个' }).default([]),
});

export const assistantNodeData = z.object({
  assistantId: z.string().max(64).default(''),
  /** A published version; null: whichever version is live when the call reaches the node. */
  version: z.number().int().min(1).nullable().default(null),
  /** The assistant's variables, as templates of flow variables. */
  variables: z
    .array(z.object({ name: requiredText('变量名', 20), value: optionalText('变量值', 200).default('') }))
    .max(30)
    .default([]),
});

export const transferNodeData = z.object({
  /** A phone number or a SIP address (sip:agent@host). */
  target: optionalText('转接号码', 200).default(''),
  /** The number the agent sees: the caller's, the dialled number, or a fixed one. */
  callerId: z.enum(['caller', 'callee', 'custom']).default('caller'),
  callerIdNumber: optionalText('外显号码', 20).default(''),
  ringTimeoutSec: seconds('振铃超时', 5, 120, 30),
  prompt: prompt('转接提示音', '正在为您转接，请稍候。'),
});

export const voicemailNodeData = z.object({
  prompt: prompt('留言提示音', '请在提示音后留言，留言完毕请挂机或按井号键。'),
  maxSeconds: seconds('留言最长时长', 5, 300, 60),
});

export const smsNodeData = z.object({
  to: optionalText('接收号码', 200).default('{{caller}}'),
  content: optionalText('短信内容', 500).default(''),
});

export const httpNodeData = z.object({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], { error: '请求方法不支持' }).default('GET'),
  url: optionalText('请求地址', 1000).default(''),
  headers: z
    .array(
      z.object({ name: requiredText('请求头名称', 100), value: optionalText('请求头值', 1000).default('') }),
    )
    .max(20)
    .default([]),
  /** A JSON template; `{{variables}}` are inserted as JSON-escaped strings. */
  body: optionalText('请求体', 5000).default(''),
  timeoutMs: z
    .number({ error: '超时须为数字' })
    .int()
    .min(100, { error: '超时不能少于 100 毫秒' })
    .max(10_000, { error: '超时不能超过 10000 毫秒' })
    .default(3000),
  retries: z.number().int().min(0).max(3, { error: '重试次数不能超过 3' }).default(1),
  /** Response fields into variables: `path` is a dotted path into the JSON body (`data.balance`, `items.0.name`). */
  mappings: z
    .array(z.object({ variable: flowVariableName(), path: requiredText('响应字段路径', 200) }))
    .max(30)
    .default([]),
  /** JSON the mappings read when the request failed, so later nodes still have values ('' none). */
  defaultResult: optionalText('默认结果', 2000).default(''),
});

export const setNodeData = z.object({
  assignments: z
    .array(z.object({ variable: flowVariableName(), value: optionalText('变量值', 500).default('') }))
    .max(30)
    .default([]),
});

export const subflowNodeData = z.object({
  /** Another flow of the project; its published version runs, then this flow continues. */
  flowId: z.string().max(64).default(''),
});

/** Ends a subflow: the calling flow continues after its 子流程 node (in a flow called directly, the call ends). */
export const returnNodeData = z.object({});

export const hangupNodeData = z.object({
  /** Said before hanging up ('' none). */
  text: prompt('挂机前放音'),
  /** Shown in the call record's path (e.g. 非工作时间). */
  reason: optionalText('结束原因', 40).default(''),
});

const position = z.object({ x: z.number(), y: z.number() }).default({ x: 0, y: 0 });
const nodeBase = {
  id: z
    .string({ error: '缺少节点标识' })
    .regex(/^[A-Za-z0-9_-]{1,40}$/, { error: '节点标识须为 1-40 个字母、数字、- 或 _' }),
  name: optionalText('节点名称', 40).default(''),
  position,
};
export const flowNode = z.discriminatedUnion(
  'type',
  [
    z.object({ ...nodeBase, type: z.literal('start'), data: startNodeData.default({}) }),
    z.object({ ...nodeBase, type: z.literal('play'), data: playNodeData.default(playNodeData.parse({})) }),
    z.object({ ...nodeBase, type: z.literal('menu'), data: menuNodeData.default(menuNodeData.parse({})) }),
    z.object({
      ...nodeBase,
      type: z.literal('collect'),
      data: collectNodeData.default(collectNodeData.parse({})),
    }),
    z.object({
      ...nodeBase,
      type: z.literal('speech'),
      data: speechNodeData.default(speechNodeData.parse({})),
    }),
    z.object({
      ...nodeBase,
      type: z.literal('condition'),
      data: conditionNodeData.default(conditionNodeData.parse({})),
    }),
    z.object({
      ...nodeBase,
      type: z.literal('assistant'),
      data: assistantNodeData.default(assistantNodeData.parse({})),
    }),
    z.object({
      ...nodeBase,
      type: z.literal('transfer'),
      data: transferNodeData.default(transferNodeData.parse({})),
    }),
    z.object({
      ...nodeBase,
      type: z.literal('voicemail'),
      data: voicemailNodeData.default(voicemailNodeData.parse({})),
    }),
    z.object({ ...nodeBase, type: z.literal('sms'), data: smsNodeData.default(smsNodeData.parse({})) }),
    z.object({ ...nodeBase, type: z.literal('http'), data: httpNodeData.default(httpNodeData.parse({})) }),
    z.object({ ...nodeBase, type: z.literal('set'), data: setNodeData.default(setNodeData.parse({})) }),
    z.object({
      ...nodeBase,
      type: z.literal('subflow'),
      data: subflowNodeData.default(subflowNodeData.parse({})),
    }),
    z.object({ ...nodeBase, type: z.literal('return'), data: returnNodeData.default({}) }),
    z.object({
      ...nodeBase,
      type: z.literal('hangup'),
      data: hangupNodeData.default(hangupNodeData.parse({})),
    }),
  ],
  { error: '节点类型不支持' },
);
export type FlowNode = z.infer<typeof flowNode>;
export type FlowNodeOf<T extends FlowNodeType> = Extract<FlowNode, { type: T }>;

export const flowEdge = z.object({
  id: z.string({ error: '缺少连线标识' }).min(1).max(80),
  source: z.string({ error: '缺少连线起点' }).min(1).max(40),
  /** The source node's exit (see `flowNodeExits`). */
  sourceHandle: z.string({ error: '缺少连线出口' }).min(1).max(40),
  target: z.string({ error: '缺少连线终点' }).min(1).max(40),
});
export type FlowEdge = z.infer<typeof flowEdge>;

/** The voice prompts are spoken in and the recogniser speech nodes listen with. */
export const flowSettings = z.object({
  voice: assistantVoice.default(assistantVoice.parse({})),
  /** A speech-recognition profile (语音配置); null: the project's primary recogniser. */
  recognizerId: entityId('语音识别配置').nullable().default(null),
});
export type FlowSettings = z.infer<typeof flowSettings>;

export const MAX_FLOW_NODES = 500;
export const flowGraph = z.object({
  nodes: z.array(flowNode).max(MAX_FLOW_NODES, { error: `节点最多 ${MAX_FLOW_NODES} 个` }),
  edges: z.array(flowEdge).max(MAX_FLOW_NODES * 8, { error: '连线过多' }),
  settings: flowSettings.default(flowSettings.parse({})),
});
export type FlowGraph = z.infer<typeof flowGraph>;

/** An exit of a node: a handle on the canvas, an edge's sourceHandle, a branch the interpreter takes. */
export interface FlowExit {
  id: string;
  label: string;
}

/** Every exit of a node, in the order the editor draws them. */
export function flowNodeExits(node: FlowNode): FlowExit[] {
  switch (node.type) {
    case 'start':
    case 'play':
    case 'set':
    case 'sms':
    case 'voicemail':
    case 'subflow':
      return [{ id: 'next', label: '下一步' }];
    case 'menu':
      return [
        ...node.data.options.map((o) => ({
          id: `key:${o.key}`,
          label: o.label ? `${o.key} ${o.label}` : `按 ${o.key}`,
        })),
        { id: 'invalid', label: '输入错误' },
        { id: 'timeout', label: '超时' },
      ];
    case 'collect':
      return [
        { id: 'next', label: '收号成功' },
        { id: 'invalid', label: '输入错误' },
        { id: 'timeout', label: '超时' },
      ];
    case 'speech':
      return [
        ...node.data.intents.map((i) => ({ id: `intent:${i.id}`, label: i.name })),
        { id: 'nomatch', label: '未匹配' },
        { id: 'timeout', label: '超时' },
      ];
    case 'condition':
      return [
        ...node.data.branches.map((b) => ({ id: `branch:${b.id}`, label: b.name })),
        { id: 'else', label: '其他' },
      ];
    case 'assistant':
      return [
        { id: 'next', label: '小助手结束' },
        { id: 'transfer', label: '要求转人工' },
      ];
    case 'transfer':
      return [
        { id: 'busy', label: '忙线' },
        { id: 'no_answer', label: '无人接听' },
        { id: 'failed', label: '转接失败' },
      ];
    case 'http':
      return [
        { id: 'success', label: '成功' },
        { id: 'failure', label: '失败' },
      ];
    case 'return':
    case 'hangup':
      return [];
  }
}

/** Nodes that wait for the caller (or a person): a loop through one of them cannot spin. */
export const WAITING_FLOW_NODE_TYPES: ReadonlySet<FlowNodeType> = new Set([
  'menu',
  'collect',
  'speech',
  'assistant',
  'transfer',
  'voicemail',
]);

/** The variables a node sets when it runs (beside the system ones it updates). */
export function flowNodeOutputs(node: FlowNode): string[] {
  switch (node.type) {
    case 'collect':
    case 'speech':
      return [node.data.variable];
    case 'http':
      return node.data.mappings.map((m) => m.variable);
    case 'set':
      return node.data.assignments.map((a) => a.variable);
    default:
      return [];
  }
}

/** One problem of a flow, pointing at its node (null: the flow as a whole). */
export const flowIssue = z.object({
  nodeId: z.string().nullable(),
  /** Errors block publishing; warnings never do. Saving a draft always works. */
  severity: z.enum(['error', 'warning']),
  code: z.enum([
    'no_start',
    'many_starts',
    'unreachable',
    'exit_unconnected',
    'missing_setting',
    'variable_unset',
    'endless_loop',
    'http_no_failure',
    'menu_too_few',
    'duplicate_key',
    'bad_pattern',
    'dangling_edge',
    'self_subflow',
  ]),
  message: z.string(),
});
export type FlowIssue = z.infer<typeof flowIssue>;

// ---- API -------------------------------------------------------------------------------------

export const flowStatus = z.enum(['draft', 'published', 'changed']);
export type FlowStatus = z.infer<typeof flowStatus>;
/** 草稿 / 已发布 vN / 有未发布修改. */
export const FLOW_STATUS_LABELS: Record<FlowStatus, string> = {
  draft: '草稿',
  published: '已发布',
  changed: '有未发布修改',
};

export const flowSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    status: flowStatus,
    publishedVersion: z.number().int().nullable(),
    /** Numbers whose inbound calls this flow answers. */
    numbers: z.array(z.string()),
    /** Calls that ran this flow in the last 7 days. */
    calls7d: z.number().int(),
    nodeCount: z.number().int(),
    updatedAt: z.iso.datetime(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'FlowSummary' });
export type FlowSummary = z.infer<typeof flowSummary>;

export const flowDetail = flowSummary
  .extend({
    draft: flowGraph,
    /** The live version's graph, for the diff before publishing; null before the first publish. */
    published: flowGraph.nullable(),
    /** Validation of the draft as it is stored. */
    issues: z.array(flowIssue),
  })
  .meta({ id: 'FlowDetail' });
export type FlowDetail = z.infer<typeof flowDetail>;

export const flowCreateRequest = z.object({
  name: requiredText('流程名称', 40),
  description: optionalText('流程说明', 200).default(''),
});
export type FlowCreateRequest = z.infer<typeof flowCreateRequest>;

export const flowDraftRequest = z.object({
  name: requiredText('流程名称', 40).optional(),
  description: optionalText('流程说明', 200).optional(),
  graph: flowGraph,
});
export type FlowDraftRequest = z.infer<typeof flowDraftRequest>;
export const flowDraftSaved = z.object({ updatedAt: z.iso.datetime(), issues: z.array(flowIssue) });
export type FlowDraftSaved = z.infer<typeof flowDraftSaved>;

export const flowPublishRequest = z.object({ note: optionalText('发布说明', 200).default('') });
export type FlowPublishRequest = z.infer<typeof flowPublishRequest>;

export const flowVersionSummary = z.object({
  version: z.number().int(),
  note: z.string(),
  publishedAt: z.iso.datetime(),
  publishedByName: z.string().nullable(),
  /** Set when published by approving a review: the member who submitted it. */
  submittedByName: z.string().nullable(),
  /** This version answers calls now. */
  live: z.boolean(),
});
export type FlowVersionSummary = z.infer<typeof flowVersionSummary>;

/** The file 导出 writes and 导入 reads. */
export const FLOW_EXPORT_FORMAT = 'callpilot.flow';
export const flowExport = z.object({
  format: z.literal(FLOW_EXPORT_FORMAT, {
    error: `不是通话流程导出文件（format 须为 ${FLOW_EXPORT_FORMAT}）`,
  }),
  version: z.literal(1, { error: '导出文件版本不支持' }),
  name: requiredText('流程名称', 40),
  description: optionalText('流程说明', 200).default(''),
  graph: flowGraph,
});
export type FlowExport = z.infer<typeof flowExport>;

export const flowIdParams = z.object({
  projectId: entityId('项目 ID'),
  flowId: entityId('流程 ID'),
});
export const flowVersionParams = flowIdParams.extend({
  version: z.coerce
    .number({ error: '版本号须为数字' })
    .int({ error: '版本号须为整数' })
    .min(1, { error: '版本号至少为 1' }),
});
export const flowListQuery = pageQuery.extend({ keyword: optionalText('关键词', 50).optional() });
export type FlowListQuery = z.infer<typeof flowListQuery>;

/** A flow in pickers (subflow nodes, the numbers' inbound binding). */
export const flowOption = z.object({
  id: z.string(),
  name: z.string(),
  publishedVersion: z.number().int().nullable(),
});
export type FlowOption = z.infer<typeof flowOption>;

/** An uploaded prompt a 放音 node plays (stored as 8 kHz mono WAV). */
export const flowAudio = z
  .object({
    id: z.string(),
    name: z.string(),
    durationMs: z.number().int(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'FlowAudio' });
export type FlowAudio = z.infer<typeof flowAudio>;
export const flowAudioIdParams = z.object({
  projectId: entityId('项目 ID'),
  audioId: entityId('音频 ID'),
});
/** What an uploaded prompt may be: a WAV (any rate, any channels) of at most 5 MB and 120 s. */
export const FLOW_AUDIO_RULES = { maxBytes: 5 * 1024 * 1024, maxSeconds: 120, nameMax: 40 } as const;
/** An import file larger than this is refused before it is parsed. */
export const FLOW_IMPORT_MAX_BYTES = 2 * 1024 * 1024;

/** Per node of a flow over a date range: the funnel on the canvas. */
export const flowNodeStats = z.object({
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  calls: z.number().int(),
  nodes: z.array(
    z.object({
      nodeId: z.string(),
      /** Calls that entered the node at least once. */
      reached: z.number().int(),
      /** Calls whose caller hung up while in this node. */
      hungUp: z.number().int(),
    }),
  ),
});
export type FlowNodeStats = z.infer<typeof flowNodeStats>;
export const flowStatsQuery = z.object({
  from: z.iso.datetime({ offset: true, error: '开始时间格式不正确' }).optional(),
  to: z.iso.datetime({ offset: true, error: '结束时间格式不正确' }).optional(),
});

/**
 * One node a call went through: the call record's path timeline, the canvas statistics and the
 * simulator's step log.
 */
export const flowStep = z.object({
  nodeId: z.string(),
  nodeType: flowNodeType,
  nodeName: z.string(),
  /** Offset from the moment the call was answered (the recording's time). */
  atMs: z.number().int(),
  durationMs: z.number().int(),
  /** The exit taken; null when the call ended in the node. */
  exit: z.string().nullable(),
  /** What the caller gave the node: keys pressed, what was recognised. */
  input: z.string().nullable(),
  /** Variables the node set. */
  output: z.record(z.string(), z.string()),
  /** One line for people: 'HTTP 200 · 132 ms', '匹配意图：报修', '重试 1 次'. */
  detail: z.string(),
  /** A subflow's steps carry its flow's id (null: the call's own flow). */
  flowId: z.string().nullable().default(null),
});
export type FlowStep = z.infer<typeof flowStep>;

export const flowTestCallRequest = z.object({
  /** What the simulated caller does at each prompt, in order: digits ('1', '123#') or words. Empty: the persona decides. */
  script: z.array(optionalText('模拟输入', 200)).max(30, { error: '模拟输入最多 30 步' }).default([]),
  callerNumber: z
    .string()
    .trim()
    .regex(/^$|^1[3-9]\d{9}$/, { error: '主叫号码须为 11 位手机号' })
    .default(''),
});
export type FlowTestCallRequest = z.infer<typeof flowTestCallRequest>;

// ---- Simulation in the editor ----------------------------------------------------------------

export const flowSimulationStart = z.object({
  callerNumber: z
    .string()
    .trim()
    .regex(/^$|^[0-9+]{3,20}$/, { error: '主叫号码格式不正确' })
    .default('13800138000'),
  calleeNumber: z.string().trim().max(20).default(''),
  /** The draft as the editor holds it (unsaved changes included). */
  graph: flowGraph,
});
export type FlowSimulationStart = z.infer<typeof flowSimulationStart>;
export const flowSimulationInput = z.discriminatedUnion(
  'kind',
  [
    z.object({
      kind: z.literal('digits'),
      value: z.string().regex(/^[0-9*#]{1,32}$/, { error: '按键须为数字、* 或 #' }),
    }),
    z.object({ kind: z.literal('speech'), value: requiredText('说的话', 200) }),
    z.object({ kind: z.literal('timeout') }),
    z.object({ kind: z.literal('hangup') }),
  ],
  { error: '模拟输入类型不支持' },
);
export type FlowSimulationInput = z.infer<typeof flowSimulationInput>;
export const flowSimulationPrompt = z.object({
  nodeId: z.string(),
  text: z.string(),
  /** Offline-voice audio of the prompt: GET it (a WAV) with the session's token. */
  audioUrl: z.string().nullable(),
});
export const flowSimulationState = z.object({
  simulationId: z.string(),
  /** Every step so far, with the variables after it (the simulator's step log). */
  steps: z.array(flowStep.extend({ variables: z.record(z.string(), z.string()) })),
  prompts: z.array(flowSimulationPrompt),
  /** What the flow waits for now; null when it is running or over. */
  waiting: z
    .object({
      nodeId: z.string(),
      kind: z.enum(['digits', 'speech', 'any']),
      timeoutSec: z.number(),
    })
    .nullable(),
  /** Set once the simulated call is over. */
  ended: z.object({ reason: z.string(), nodeId: z.string().nullable() }).nullable(),
  variables: z.record(z.string(), z.string()),
});
export type FlowSimulationState = z.infer<typeof flowSimulationState>;

/** A call record's flow: which flow and version answered it, and the path it took. */
export const callFlowPath = z.object({
  flowId: z.string().nullable(),
  flowName: z.string(),
  /** null: the draft (a 模拟来电 from the editor). */
  flowVersion: z.number().int().nullable(),
  steps: z.array(flowStep),
});
export type CallFlowPath = z.infer<typeof callFlowPath>;
