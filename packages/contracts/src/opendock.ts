import { z } from 'zod';
import { assistantStatus, assistantUse, assistantVariable } from './assistants';
import { callDetail, callFilterFields, callSummary, checkCallFilterRanges, simPersona } from './calls';
import { entityId, optionalText } from './common';

/**
 * The open API (/opendock/v1): what customers' own systems (CRM, order systems) send and get
 * back. The API key implies the project, so no path or body names one. Shapes the console already
 * has (task settings, task detail, knowledge documents, the do-not-call list...) are reused as
 * they are: the open API behaves exactly like the console, with the same rules and messages.
 * Key scopes and the webhook catalogue live in developer.ts and webhook-events.ts.
 */

/** The OpenAPI tags of the open API, one per resource, in the order the docs page shows them. */
export const OPENDOCK_TAGS = {
  calls: '开放接口 · 通话',
  tasks: '开放接口 · 呼出任务',
  assistants: '开放接口 · 智能小助手',
  knowledge: '开放接口 · 知识库',
  doNotCall: '开放接口 · 免打扰名单',
  sms: '开放接口 · 短信',
} as const;

// ---------------------------------------------------------------------------------------------
// Path parameters
// ---------------------------------------------------------------------------------------------

export const openCallIdParams = z.object({
  callId: entityId('通话 ID').meta({ description: '通话 ID（发起呼叫或通话列表返回的 id）' }),
});
export const openTaskIdParams = z.object({
  taskId: entityId('任务 ID').meta({ description: '呼出任务 ID' }),
});
export const openAssistantIdParams = z.object({
  assistantId: entityId('小助手 ID').meta({ description: '智能小助手 ID' }),
});
export const openKnowledgeBaseIdParams = z.object({
  knowledgeBaseId: entityId('知识库 ID').meta({ description: '知识库 ID' }),
});
export const openKnowledgeDocumentParams = openKnowledgeBaseIdParams.extend({
  documentId: entityId('文档 ID').meta({ description: '文档 ID（上传应答 accepted[].id）' }),
});
export const openSmsIdParams = z.object({
  smsId: entityId('短信 ID').meta({ description: '短信记录 ID（发送短信应答的 id）' }),
});
export const openDoNotCallPhoneParams = z.object({
  phone: entityId('号码').meta({ description: '要移出的号码，如 13800138000', example: '13800138000' }),
});

// ---------------------------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------------------------

/** Assistant variables a request fills (`{{客户姓名}}` in the prompt and the opening line). */
const variableValues = z
  .record(z.string().max(20, { error: '变量名不能超过 20 个字符' }), optionalText('变量值', 200), {
    error: '变量须为“变量名: 值”的对象',
  })
  .refine((values) => Object.keys(values).length <= 50, { error: '变量最多 50 个' });

export const openCallCreateRequest = z
  .object({
    assistantId: entityId('小助手 ID').meta({
      description: '接听后与客户对话的智能小助手（须已发布），见 GET /opendock/v1/assistants',
      example: '2f9a1c3e-5b7d-4e8f-9a0b-1c2d3e4f5a6b',
    }),
    assistantVersion: z
      .number({ error: '小助手版本须为数字' })
      .int({ error: '小助手版本须为整数' })
      .min(1, { error: '小助手版本至少为 1' })
      .optional()
      .meta({ description: '已发布的版本号；省略时使用当前线上版本', example: 3 }),
    phone: z
      .string({ error: '请输入被叫号码' })
      .trim()
      .min(1, { error: '请输入被叫号码' })
      .max(30, { error: '被叫号码不能超过 30 个字符' })
      .meta({
        description:
          '被叫号码：中国大陆手机号或带区号的固话；可带 +86、空格或横线，校验规则与控制台导入号码相同',
        example: '13800138000',
      }),
    callerNumber: z
      .string({ error: '外显号码须为文本' })
      .trim()
      .max(30, { error: '外显号码不能超过 30 个字符' })
      .optional()
      .meta({
        description:
          '外显号码：项目「号码管理」中已启用的号码；号码绑定了 SIP 中继时经该中继呼出。' +
          '省略时与未设置外显号码的呼出任务相同，经模拟线路以默认号码呼出',
        example: '02160880000',
      }),
    variables: variableValues.default({}).meta({
      description:
        '小助手变量的取值（如 {"客户姓名": "张先生"}）；小助手标为必填的变量必须提供，未定义的变量被忽略',
      example: { 客户姓名: '张先生', 套餐: '300M 宽带' },
    }),
    simulatedPersona: simPersona.optional().meta({
      description:
        '仅模拟线路：指定模拟客户的表现（如 interested 有意向、busy 忙线），便于联调；' +
        '省略时模拟客户按真实比例随机表现。经 SIP 中继的真实呼叫不能指定',
      example: 'interested',
    }),
  })
  .meta({ id: 'OpenCallCreateRequest' });
export type OpenCallCreateRequest = z.infer<typeof openCallCreateRequest>;

export const openCallCreated = z
  .object({
    callId: z.string().meta({ description: '通话 ID：用于查询通话详情，也是 Webhook 事件中的 call.id' }),
    /** ringing: the record exists and the line is dialling; queued: an engine process took it and is about to. */
    status: z.enum(['queued', 'ringing']).meta({
      description:
        'ringing：已开始拨号；queued：已交给通话引擎，即将拨号。之后的进展见通话详情或 Webhook 事件',
    }),
  })
  .meta({ id: 'OpenCallCreated' });
export type OpenCallCreated = z.infer<typeof openCallCreated>;

export const openCallDetail = callDetail
  .extend({
    recordingUrl: z.string().nullable().meta({
      description:
        '录音（WAV）的签名下载地址，无需 API 密钥即可下载，过期后重新查询通话详情获取；录音未生成时为 null',
    }),
    recordingUrlExpiresAt: z.iso.datetime().nullable().meta({ description: '录音地址的过期时间' }),
  })
  .meta({ id: 'OpenCallDetail' });
export type OpenCallDetail = z.infer<typeof openCallDetail>;

export const OPEN_CALL_LIST_MAX = 100;

/** The record list's filters (sorted by start time only: the cursor is a start time and an id). */
const filter = callFilterFields.shape;

export const openCallListQuery = callFilterFields
  // The reports' drill-down filters are the console's; the open API keeps its documented set.
  .omit({
    sort: true,
    flowId: true,
    lineNumber: true,
    answered: true,
    hangupBy: true,
    assistantTalked: true,
    transferred: true,
    humanGraded: true,
    waitMin: true,
    waitMax: true,
  })
  .extend({
    from: filter.from.meta({ description: '开始时间不早于（ISO 8601，如 2030-05-01T00:00:00Z）' }),
    to: filter.to.meta({ description: '开始时间不晚于（ISO 8601）' }),
    direction: filter.direction.meta({ description: 'outbound 呼出，inbound 呼入' }),
    endReason: filter.endReason.meta({ description: '结束原因，多个用逗号分隔，如 completed,busy' }),
    intentGrade: filter.intentGrade.meta({
      description: '意向等级 A、B、C、D，none 为未评级；多个用逗号分隔',
    }),
    taskId: filter.taskId.meta({ description: '只看该呼出任务的通话' }),
    assistantId: filter.assistantId.meta({ description: '只看该小助手的通话' }),
    number: filter.number.meta({ description: '主叫或被叫号码的一部分' }),
    talkMin: filter.talkMin.meta({ description: '通话时长下限（秒）' }),
    talkMax: filter.talkMax.meta({ description: '通话时长上限（秒）' }),
    tags: filter.tags.meta({ description: '标签，多个用逗号分隔（含任一即可）' }),
    status: filter.status.meta({ description: 'ringing 呼叫中，in_progress 通话中，ended 已结束' }),
    order: filter.order.meta({ description: 'desc 从新到旧（默认），asc 从旧到新' }),
    limit: z.coerce
      .number({ error: '每页条数须为数字' })
      .int({ error: '每页条数须为整数' })
      .min(1, { error: '每页条数至少为 1' })
      .max(OPEN_CALL_LIST_MAX, { error: `每页条数不能超过 ${OPEN_CALL_LIST_MAX}` })
      .default(20)
      .meta({ description: `每页条数，1-${OPEN_CALL_LIST_MAX}，默认 20` }),
    cursor: z
      .string()
      .max(200, { error: '游标无效，请使用上一页应答中的 nextCursor' })
      .optional()
      .meta({ description: '上一页应答中的 nextCursor；省略时从第一条开始' }),
  })
  .superRefine(checkCallFilterRanges);
export type OpenCallListQuery = z.infer<typeof openCallListQuery>;

export const openCallList = z
  .object({
    items: z.array(callSummary),
    nextCursor: z.string().nullable().meta({ description: '下一页的游标；为 null 时已到最后一页' }),
  })
  .meta({ id: 'OpenCallList' });
export type OpenCallList = z.infer<typeof openCallList>;

// ---------------------------------------------------------------------------------------------
// Task contacts
// ---------------------------------------------------------------------------------------------

export const OPEN_TASK_CONTACTS_MAX = 10_000;

export const openTaskContactsRequest = z
  .object({
    contacts: z
      .array(
        z.object({
          phone: z.string({ error: '号码须为文本' }).max(50, { error: '号码不能超过 50 个字符' }).meta({
            description: '号码；格式不正确的行在 rejected 中返回原因，不影响其他行',
            example: '13800138000',
          }),
          name: optionalText('姓名', 100).default('').meta({ example: '张先生' }),
          variables: variableValues.default({}).meta({
            description: '该联系人的小助手变量取值；必填变量缺失的行被拒绝，未定义的变量被忽略',
            example: { 客户姓名: '张先生' },
          }),
        }),
        { error: '联系人须为列表' },
      )
      .min(1, { error: '请至少提供 1 个联系人' })
      .max(OPEN_TASK_CONTACTS_MAX, { error: `每次最多添加 ${OPEN_TASK_CONTACTS_MAX} 个联系人` }),
  })
  .meta({ id: 'OpenTaskContactsRequest' });
export type OpenTaskContactsRequest = z.infer<typeof openTaskContactsRequest>;

export const openContactRejectReason = z.enum(['invalid', 'duplicate', 'do_not_call']);
export type OpenContactRejectReason = z.infer<typeof openContactRejectReason>;

export const openTaskContactsResult = z
  .object({
    accepted: z.number().int().meta({ description: '加入任务的联系人数' }),
    rejected: z
      .array(
        z.object({
          index: z.number().int().meta({ description: '该行在请求 contacts 数组中的下标（从 0 开始）' }),
          phone: z.string(),
          reason: openContactRejectReason.meta({
            description:
              'invalid：号码无效或缺少必填变量；duplicate：与前面的行或任务中已有号码重复；do_not_call：在免打扰名单中',
          }),
          message: z.string().meta({ description: '中文原因', example: '号码位数不正确' }),
        }),
      )
      .meta({ description: '未加入的行及原因，按下标排序' }),
  })
  .meta({ id: 'OpenTaskContactsResult' });
export type OpenTaskContactsResult = z.infer<typeof openTaskContactsResult>;

// ---------------------------------------------------------------------------------------------
// Assistants
// ---------------------------------------------------------------------------------------------

export const openAssistantVersion = z
  .object({
    version: z.number().int(),
    note: z.string().meta({ description: '发布说明' }),
    publishedAt: z.iso.datetime(),
    variables: z.array(assistantVariable).meta({ description: '该版本的变量（发起呼叫或添加联系人时填写）' }),
  })
  .meta({ id: 'OpenAssistantVersion' });

export const openAssistant = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    use: assistantUse,
    status: assistantStatus,
    liveVersion: z
      .number()
      .int()
      .nullable()
      .meta({ description: '当前线上版本（发起呼叫省略 assistantVersion 时使用）；尚未发布时为 null' }),
    versions: z.array(openAssistantVersion).meta({ description: '已发布的版本，从新到旧' }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'OpenAssistant' });
export type OpenAssistant = z.infer<typeof openAssistant>;

export const openAssistantList = z
  .object({
    items: z.array(openAssistant),
    total: z.number().int(),
    page: z.number().int(),
    pageSize: z.number().int(),
  })
  .meta({ id: 'OpenAssistantList' });

// ---------------------------------------------------------------------------------------------
// Do-not-call list
// ---------------------------------------------------------------------------------------------

export const OPEN_DO_NOT_CALL_MAX = 1000;

export const openDoNotCallAddRequest = z
  .object({
    phones: z
      .array(z.string({ error: '号码须为文本' }).max(30, { error: '号码不能超过 30 个字符' }), {
        error: '号码须为列表',
      })
      .min(1, { error: '请至少提供 1 个号码' })
      .max(OPEN_DO_NOT_CALL_MAX, { error: `每次最多添加 ${OPEN_DO_NOT_CALL_MAX} 个号码` })
      .meta({
        description: '要加入的号码；可带 +86、空格或横线，格式不正确的号码在 rejected 中返回',
        example: ['13800138000', '021-6088 0000'],
      }),
    reason: optionalText('原因', 200).default('').meta({ example: '客户要求不再来电' }),
  })
  .meta({ id: 'OpenDoNotCallAddRequest' });
export type OpenDoNotCallAddRequest = z.infer<typeof openDoNotCallAddRequest>;

export const openDoNotCallAddResult = z
  .object({
    added: z.array(z.string()).meta({ description: '新加入名单的号码（规范化后）' }),
    existing: z.array(z.string()).meta({ description: '已在名单中的号码（保留原来的原因与来源）' }),
    rejected: z.array(
      z.object({
        index: z.number().int().meta({ description: '该号码在请求 phones 数组中的下标（从 0 开始）' }),
        phone: z.string(),
        message: z.string().meta({ example: '号码格式不正确' }),
      }),
    ),
  })
  .meta({ id: 'OpenDoNotCallAddResult' });
export type OpenDoNotCallAddResult = z.infer<typeof openDoNotCallAddResult>;

export const openDoNotCallRemoved = z
  .object({ phone: z.string().meta({ description: '移出名单的号码（规范化后）' }), removed: z.literal(true) })
  .meta({ id: 'OpenDoNotCallRemoved' });
