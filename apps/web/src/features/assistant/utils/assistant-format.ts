import {
  type AssistantDetail,
  type AssistantStatus,
  type AssistantWriteRequest,
  assistantConfig,
  type BrainAction,
} from '@callpilot/contracts';

export const ASSISTANT_STATUS_LABELS: Record<AssistantStatus, string> = { enabled: '启用', disabled: '停用' };

export const BRAIN_MODE_LABELS = { llm: '大模型', script: '离线脚本模式' } as const;

export const BRAIN_ACTION_LABELS: Record<BrainAction, string> = {
  end_call: '结束通话',
  transfer: '转人工',
  send_sms: '发送短信',
  opt_out: '已加入免打扰',
};

export const TRANSFER_WHEN_LABELS = {
  never: '不转人工',
  on_request: '客户要求时转人工',
  on_intent_a: '识别到 A 类意向时转人工',
} as const;

export const VOICEMAIL_ACTION_LABELS = { hangup: '直接挂断', leave_message: '留言后挂断' } as const;

/** The form of the editor holds exactly the body the server takes. */
export type AssistantFormValues = Required<
  Pick<AssistantWriteRequest, 'name' | 'description' | 'use' | 'status'>
> & {
  config: ReturnType<typeof assistantConfig.parse>;
};

export function emptyAssistantForm(): AssistantFormValues {
  return { name: '', description: '', use: 'outbound', status: 'enabled', config: assistantConfig.parse({}) };
}

export function toFormValues(detail: AssistantDetail): AssistantFormValues {
  return {
    name: detail.name,
    description: detail.description,
    use: detail.use,
    status: detail.status,
    config: detail.config,
  };
}

/** Inserts `text` over the selection of `value` (start..end); returns the new text and caret. */
export function insertAt(value: string, text: string, start: number, end = start) {
  const from = Math.max(0, Math.min(start, value.length));
  const to = Math.max(from, Math.min(end, value.length));
  return { value: `${value.slice(0, from)}${text}${value.slice(to)}`, caret: from + text.length };
}

export const variableToken = (name: string) => `{{${name}}}`;
