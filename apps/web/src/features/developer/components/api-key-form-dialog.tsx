import {
  API_KEY_DEFAULT_RATE_LIMIT,
  type ApiKey,
  type ApiKeyCreated,
  type ApiKeyScopes,
  apiKeyCreateRequest,
  apiKeyUpdateRequest,
} from '@callpilot/contracts';
import type { FormRule } from 'antd';
import { Alert, DatePicker, Form, Input, InputNumber, Modal, Radio } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useState } from 'react';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useCreateApiKey } from '../api/create-api-key';
import { useUpdateApiKey } from '../api/update-api-key';
import { formatTime } from '../utils/api-key-format';
import { ApiKeyScopeMatrix } from './api-key-scope-matrix';

type Expiry = 'never' | '30' | '90' | '365' | 'custom';

type FormValues = {
  name: string;
  scopes: ApiKeyScopes;
  expiry: Expiry;
  expiryDate?: Dayjs;
  /** One address or CIDR range per line, as users paste them. */
  ipAllowlist: string;
  rateLimitPerMinute: number;
};

const EXPIRY_OPTIONS: { value: Expiry; label: string }[] = [
  { value: 'never', label: '永不过期' },
  { value: '30', label: '30 天' },
  { value: '90', label: '90 天' },
  { value: '365', label: '1 年' },
  { value: 'custom', label: '自定义日期' },
];

const fields = apiKeyCreateRequest.shape;

export const splitAllowlist = (text: string | undefined) =>
  (text ?? '')
    .split(/[\s,，;；]+/)
    .map((entry) => entry.trim())
    .filter(Boolean);

/** The contract's own rule on each line, naming the line that breaks it. */
const allowlistRule: FormRule = {
  validator: async (_, value: string | undefined) => {
    const entries = splitAllowlist(value);
    const result = fields.ipAllowlist.safeParse(entries);
    if (result.success) return;
    const issue = result.error.issues[0];
    const index = typeof issue?.path[0] === 'number' ? issue.path[0] : null;
    const message = issue?.message ?? 'IP 白名单格式不正确';
    throw new Error(index === null ? message : `${message}（“${entries[index]}”）`);
  },
};

function expiresAtOf(values: FormValues): string | null {
  if (values.expiry === 'never') return null;
  // A chosen date means "through that day", in the browser's (China) time.
  if (values.expiry === 'custom')
    return values.expiryDate ? values.expiryDate.endOf('day').toISOString() : null;
  return dayjs().add(Number(values.expiry), 'day').toISOString();
}

/**
 * 创建密钥 / 编辑密钥. The rules are the contract's, so the form says what the server would; what
 * only the server can judge (an allowlist entry it cannot parse, say) comes back and is shown here.
 */
export function ApiKeyFormDialog({
  projectId,
  apiKey,
  onClose,
  onCreated,
}: {
  projectId: string;
  /** Absent when creating. */
  apiKey?: ApiKey;
  onClose: () => void;
  onCreated: (created: ApiKeyCreated) => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const create = useCreateApiKey(projectId);
  const update = useUpdateApiKey(projectId);
  const [refusal, setRefusal] = useState<string | null>(null);
  const expiry = Form.useWatch('expiry', form);
  const pending = create.isPending || update.isPending;

  const submit = (values: FormValues) => {
    setRefusal(null);
    const common = {
      name: values.name,
      scopes: values.scopes,
      ipAllowlist: splitAllowlist(values.ipAllowlist),
      rateLimitPerMinute: values.rateLimitPerMinute,
    };
    const onError = (error: Error) => setRefusal(error.message);
    if (apiKey) {
      const parsed = apiKeyUpdateRequest.safeParse(common);
      if (!parsed.success) {
        setRefusal(parsed.error.issues[0]?.message ?? '输入不正确');
        return;
      }
      update.mutate(
        { keyId: apiKey.id, body: parsed.data },
        {
          onSuccess: (saved) => {
            toast.success(`密钥「${saved.name}」已保存`);
            onClose();
          },
          onError,
        },
      );
      return;
    }
    const parsed = apiKeyCreateRequest.safeParse({ ...common, expiresAt: expiresAtOf(values) });
    if (!parsed.success) {
      setRefusal(parsed.error.issues[0]?.message ?? '输入不正确');
      return;
    }
    create.mutate(parsed.data, { onSuccess: onCreated, onError });
  };

  return (
    <Modal
      open
      title={apiKey ? '编辑密钥' : '创建密钥'}
      okText={apiKey ? '保存' : '创建'}
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={pending}
      destroyOnHidden
      mask={{ closable: false }}
      width={620}
    >
      {refusal && <Alert type="error" showIcon className="!mb-4" title={refusal} />}
      <Form<FormValues>
        form={form}
        name="api-key"
        layout="vertical"
        requiredMark={false}
        disabled={pending}
        initialValues={{
          name: apiKey?.name ?? '',
          scopes: apiKey?.scopes ?? {},
          expiry: 'never',
          ipAllowlist: (apiKey?.ipAllowlist ?? []).join('\n'),
          rateLimitPerMinute: apiKey?.rateLimitPerMinute ?? API_KEY_DEFAULT_RATE_LIMIT,
        }}
        onFinish={submit}
      >
        <Form.Item
          label="名称"
          name="name"
          rules={[zodRule(fields.name)]}
          extra="用于区分调用方，如「CRM 正式环境」"
        >
          <Input aria-label="名称" maxLength={50} placeholder="例如：CRM 正式环境" />
        </Form.Item>
        <Form.Item
          label="权限"
          name="scopes"
          rules={[zodRule(fields.scopes)]}
          extra="读写包含只读。只授予调用方需要的资源：密钥泄露时影响最小。"
        >
          <ApiKeyScopeMatrix />
        </Form.Item>
        {apiKey ? (
          <Form.Item label="过期时间">
            <span className="text-sm text-gray-700">
              {apiKey.expiresAt ? formatTime(apiKey.expiresAt) : '永不过期'}
              <span className="ml-2 text-xs text-gray-400">过期时间创建后不能修改，需要时请轮换密钥</span>
            </span>
          </Form.Item>
        ) : (
          <div className="flex flex-wrap items-start gap-x-4">
            <Form.Item label="过期时间" name="expiry">
              <Radio.Group aria-label="过期时间" options={EXPIRY_OPTIONS} />
            </Form.Item>
            {expiry === 'custom' && (
              <Form.Item
                label="过期日期"
                name="expiryDate"
                rules={[{ required: true, message: '请选择过期日期' }]}
                extra="当天 23:59:59 过期"
              >
                <DatePicker
                  aria-label="过期日期"
                  disabledDate={(date) => date.isBefore(dayjs().startOf('day'))}
                />
              </Form.Item>
            )}
          </div>
        )}
        <Form.Item
          label="IP 白名单"
          name="ipAllowlist"
          rules={[allowlistRule]}
          extra="每行一个 IP 地址或 CIDR 网段；留空则不限制来源。其他地址的请求会被拒绝（403）。"
        >
          <Input.TextArea aria-label="IP 白名单" rows={3} placeholder={'203.0.113.7\n198.51.100.0/24'} />
        </Form.Item>
        <Form.Item
          label="每分钟请求上限"
          name="rateLimitPerMinute"
          rules={[zodRule(fields.rateLimitPerMinute)]}
          extra="超过后返回 429 和 Retry-After；每个响应都带 RateLimit 头"
        >
          <InputNumber aria-label="每分钟请求上限" precision={0} className="!w-40" />
        </Form.Item>
      </Form>
    </Modal>
  );
}
