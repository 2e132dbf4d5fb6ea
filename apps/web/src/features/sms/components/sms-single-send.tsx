import {
  MAINLAND_MOBILE,
  normalizeMobile,
  SMS_MESSAGE_STATUS_LABELS,
  type SmsMessage,
} from '@callpilot/contracts';
import { Alert, Button, Form, Input, Select } from 'antd';
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { useSmsSignatures } from '../api/get-sms-signatures';
import { useSmsTemplates } from '../api/get-sms-templates';
import { useSendSmsMessage } from '../api/send-sms-message';
import { marketingWaitNotice, smsSendPreview } from '../utils/sms-send-preview';

/** Approved ones only: nothing else can be sent. 100 is the most a page holds. */
export const APPROVED = { page: 1, pageSize: 100, status: 'approved' } as const;

type Values = {
  signatureId?: string;
  templateId?: string;
  phone?: string;
  variables?: Record<string, string>;
};

function resultAlert(message: SmsMessage) {
  const label = SMS_MESSAGE_STATUS_LABELS[message.status];
  if (message.status === 'blocked') {
    return { type: 'warning' as const, title: `${label}：${message.errorMessage ?? '号码不可发送'}` };
  }
  if (message.status === 'waiting') {
    const wait = message.timeline.find((entry) => entry.status === 'waiting')?.detail;
    return { type: 'info' as const, title: `${label}：${wait ?? '将在允许的时段发出'}` };
  }
  return { type: 'success' as const, title: `已提交发送（${label}）` };
}

/** 单条发送: an approved signature and template, the variables, a number; the exact text as it will go. */
export function SmsSingleSend({ projectId, now = Date.now }: { projectId: string; now?: () => number }) {
  const [form] = Form.useForm<Values>();
  const signatures = useSmsSignatures(projectId, APPROVED);
  const templates = useSmsTemplates(projectId, APPROVED);
  const send = useSendSmsMessage(projectId);
  const [result, setResult] = useState<SmsMessage | null>(null);
  const signatureId = Form.useWatch('signatureId', form);
  const templateId = Form.useWatch('templateId', form);
  const variables = Form.useWatch('variables', form) as Record<string, string> | undefined;

  const signature = signatures.data?.items.find((s) => s.id === signatureId);
  const template = templates.data?.items.find((t) => t.id === templateId);
  const preview = useMemo(
    () => (template ? smsSendPreview(signature?.name, template.content, variables ?? {}) : null),
    [signature?.name, template, variables],
  );
  const waitNotice = marketingWaitNotice(template?.type, now());

  const submit = async (values: Values) => {
    setResult(null);
    const message = await send.mutateAsync({
      phone: values.phone ?? '',
      signatureId: values.signatureId ?? '',
      templateId: values.templateId ?? '',
      variables: Object.fromEntries(
        (template?.variables ?? []).map((name) => [name, (values.variables?.[name] ?? '').trim()]),
      ),
    });
    setResult(message);
  };

  const noSignature = signatures.isSuccess && signatures.data.items.length === 0;
  const noTemplate = templates.isSuccess && templates.data.items.length === 0;

  return (
    <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_minmax(0,1fr)]">
      <Form form={form} layout="vertical" onFinish={(values) => void submit(values).catch(() => undefined)}>
        {noSignature && (
          <Alert
            className="mb-4"
            type="info"
            showIcon
            title={
              <span>
                还没有已通过审核的签名，请先在 <Link to={paths.smsSignature}>签名管理</Link> 中新建并提交审核
              </span>
            }
          />
        )}
        {noTemplate && (
          <Alert
            className="mb-4"
            type="info"
            showIcon
            title={
              <span>
                还没有已通过审核的模板，请先在 <Link to={paths.smsTemplate}>模板管理</Link> 中新建并提交审核
              </span>
            }
          />
        )}
        <Form.Item label="签名" name="signatureId" rules={[{ required: true, message: '请选择签名' }]}>
          <Select
            placeholder="选择已通过的签名"
            loading={signatures.isPending}
            options={signatures.data?.items.map((s) => ({ value: s.id, label: `【${s.name}】` }))}
          />
        </Form.Item>
        <Form.Item label="模板" name="templateId" rules={[{ required: true, message: '请选择模板' }]}>
          <Select
            placeholder="选择已通过的模板"
            loading={templates.isPending}
            options={templates.data?.items.map((t) => ({ value: t.id, label: t.name }))}
          />
        </Form.Item>
        {template?.variables.map((name) => (
          <Form.Item
            key={name}
            label={`变量 \${${name}}`}
            name={['variables', name]}
            rules={[
              { required: true, whitespace: true, message: `请填写变量 ${name} 的值` },
              { max: 35, message: '变量值不能超过 35 个字符' },
            ]}
          >
            <Input placeholder={`\${${name}} 的值`} maxLength={35} showCount />
          </Form.Item>
        ))}
        <Form.Item
          label="手机号"
          name="phone"
          rules={[
            { required: true, message: '请输入手机号' },
            {
              validator: (_, value: string | undefined) =>
                !value || MAINLAND_MOBILE.test(normalizeMobile(value.trim()))
                  ? Promise.resolve()
                  : Promise.reject(new Error('手机号须为 11 位中国大陆手机号')),
            },
          ]}
        >
          <Input placeholder="例如 13800138000" maxLength={20} />
        </Form.Item>
        {send.isError && <Alert className="mb-4" type="error" showIcon title={send.error.message} />}
        <Button
          type="primary"
          htmlType="submit"
          loading={send.isPending}
          disabled={noSignature || noTemplate}
        >
          发送
        </Button>
      </Form>
      <aside className="flex flex-col gap-3" aria-label="短信预览">
        <h3 className="text-sm font-medium text-gray-700">预览</h3>
        {preview ? (
          <>
            <p className="whitespace-pre-wrap break-all rounded-lg bg-gray-50 p-4 text-sm text-gray-900">
              {preview.text}
            </p>
            <p className="text-sm text-gray-500">
              共 {preview.length} 字，按 {preview.parts} 条计费
              {preview.parts > 1 ? '（超过 70 字按每条 67 字拆分）' : ''}
            </p>
          </>
        ) : (
          <p className="text-sm text-gray-500">选择签名和模板后在此显示将要发出的短信全文</p>
        )}
        {waitNotice && <Alert type="warning" showIcon title={waitNotice} />}
        {result && (
          <Alert
            {...resultAlert(result)}
            showIcon
            description={
              <span>
                {result.phone}：{result.content}（{result.parts} 条）。
                <Link to={paths.smsRecord}>查看发送记录</Link>
              </span>
            }
          />
        )}
      </aside>
    </div>
  );
}
