import {
  INTENT_GRADE_LABELS,
  type IntentGrade,
  renderSmsTemplate,
  SMS_VARIABLE_MAX_LENGTH,
  SMS_VARIABLE_SOURCE_LABELS,
  type SmsFollowUpRule,
  type SmsTemplate,
  type SmsVariableSource,
  smsParts,
  smsSampleValue,
  smsSignatureText,
} from '@callpilot/contracts';
import { Alert, AutoComplete, Checkbox, Form, Input, Modal, Radio, Select, Switch } from 'antd';
import { useState } from 'react';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { useApprovedSmsSignatures, useApprovedSmsTemplates } from '../api/get-approved-sms-options';
import { useSaveSmsFollowUpRule } from '../api/save-sms-follow-up-rule';
import type { SmsRuleOwner } from '../api/sms-follow-up-query-keys';

type SourceKind = SmsVariableSource['from'];
type VariableRow = { from?: SourceKind; name?: string; value?: string };
type FormValues = {
  trigger: 'grade' | 'requested';
  grades: IntentGrade[];
  signatureId?: string;
  templateId?: string;
  variableMap: Record<string, VariableRow>;
  enabled: boolean;
};

const GRADES: IntentGrade[] = ['A', 'B', 'C', 'D'];

/** Values the preview shows for each source: samples, never a real customer's data. */
function sampleOf(variable: string, row: VariableRow | undefined): string | undefined {
  switch (row?.from) {
    case 'call_variable':
      return row.name ? smsSampleValue(variable) : undefined;
    case 'contact_name':
      return '张先生';
    case 'line_number':
      return '02155501234';
    case 'assistant_text':
      return '门店地址：星河路 1 号';
    case 'fixed':
      return row.value || undefined;
    default:
      return undefined;
  }
}

function toSource(row: VariableRow): SmsVariableSource {
  if (row.from === 'call_variable') return { from: 'call_variable', name: (row.name ?? '').trim() };
  if (row.from === 'fixed') return { from: 'fixed', value: row.value ?? '' };
  return { from: row.from as Exclude<SourceKind, 'call_variable' | 'fixed'> };
}

function initialValues(rule: SmsFollowUpRule | undefined): FormValues {
  if (!rule) return { trigger: 'grade', grades: ['A'], variableMap: {}, enabled: true };
  return {
    trigger: rule.trigger,
    grades: rule.grades,
    signatureId: rule.signatureId,
    templateId: rule.templateId,
    variableMap: rule.variableMap as Record<string, VariableRow>,
    enabled: rule.enabled,
  };
}

export interface SmsFollowUpRuleDialogProps {
  open: boolean;
  projectId: string;
  owner: SmsRuleOwner;
  /** Absent: a new rule. */
  rule?: SmsFollowUpRule;
  /** The call variables the owner's calls carry (the assistant's variables, the task's columns). */
  variableNames: string[];
  onClose: () => void;
}

/**
 * A 跟进短信 rule: when it sends, which approved signature and template, and each variable's
 * source. Mounted when opened (the card renders it only then), so each opening starts fresh.
 */
export function SmsFollowUpRuleDialog({
  open,
  projectId,
  owner,
  rule,
  variableNames,
  onClose,
}: SmsFollowUpRuleDialogProps) {
  const [form] = Form.useForm<FormValues>();
  const signatures = useApprovedSmsSignatures(projectId, open);
  const templates = useApprovedSmsTemplates(projectId, open);
  const save = useSaveSmsFollowUpRule(projectId);

  // The form's values as they change (the rows and the preview follow them; the Modal renders the
  // form in a portal after this component, where Form.useWatch is not yet connected).
  const [watched, setWatched] = useState<FormValues>(() => initialValues(rule));
  const { trigger, signatureId, templateId } = watched;
  const variableMap = watched.variableMap ?? {};

  const signatureList = signatures.data?.items ?? [];
  const templateList = templates.data?.items ?? [];
  const template: SmsTemplate | undefined = templateList.find((t) => t.id === templateId);
  const signature = signatureList.find((s) => s.id === signatureId);
  const templateVariables = template?.variables ?? [];
  const samples = Object.fromEntries(
    templateVariables.map((name) => [name, sampleOf(name, variableMap[name])]),
  );
  const preview = template
    ? smsSignatureText(signature?.name) + renderSmsTemplate(template.content, samples)
    : '';

  const sourceOptions = (Object.keys(SMS_VARIABLE_SOURCE_LABELS) as SourceKind[])
    .filter((from) => from !== 'assistant_text' || trigger === 'requested')
    .map((from) => ({ value: from, label: SMS_VARIABLE_SOURCE_LABELS[from] }));

  const submit = async () => {
    const values = await form.validateFields();
    const map = Object.fromEntries(
      templateVariables.map((name) => [name, toSource(values.variableMap[name] ?? {})]),
    );
    await save.mutateAsync({
      id: rule?.id,
      body: {
        ...owner,
        trigger: values.trigger,
        grades: values.trigger === 'grade' ? values.grades : [],
        signatureId: values.signatureId ?? '',
        templateId: values.templateId ?? '',
        variableMap: map,
        enabled: values.enabled,
      },
    });
    onClose();
  };

  const noSignature = !signatures.isPending && signatureList.length === 0;
  const noTemplate = !templates.isPending && templateList.length === 0;

  return (
    <Modal
      title={rule ? '编辑跟进短信' : '添加跟进短信'}
      open={open}
      width={640}
      okText="保存"
      cancelText="取消"
      confirmLoading={save.isPending}
      onOk={() => void submit().catch(() => undefined)}
      onCancel={onClose}
      destroyOnHidden
    >
      <Form
        form={form}
        layout="vertical"
        initialValues={initialValues(rule)}
        onValuesChange={(_changed, all) => setWatched((before) => ({ ...before, ...all }))}
      >
        <Form.Item name="trigger" label="触发条件">
          <Radio.Group
            options={[
              { value: 'grade', label: '通话结束后按意向等级' },
              { value: 'requested', label: '助手请求发送' },
            ]}
          />
        </Form.Item>
        {trigger === 'grade' ? (
          <Form.Item
            name="grades"
            label="意向等级"
            rules={[{ required: true, type: 'array', min: 1, message: '请至少选择一个意向等级' }]}
          >
            <Checkbox.Group
              options={GRADES.map((g) => ({ value: g, label: `${g} ${INTENT_GRADE_LABELS[g]}` }))}
            />
          </Form.Item>
        ) : (
          <p className="mb-4 text-sm text-gray-500">
            通话中小助手决定给客户发短信时，按本规则的模板发送；“助手要发送的内容”为小助手拟发送的文字（超过
            35 个字符会被截断）。
          </p>
        )}
        {(noSignature || noTemplate) && (
          <Alert
            className="mb-4"
            type="warning"
            showIcon
            title={`项目还没有已通过审核的${noSignature && noTemplate ? '签名和模板' : noSignature ? '签名' : '模板'}`}
            description={
              <span>
                请先到 <Link to={noSignature ? paths.smsSignature : paths.smsTemplate}>短信管理</Link>{' '}
                添加并提交审核，通过后即可在这里选择。
              </span>
            }
          />
        )}
        <Form.Item name="signatureId" label="签名" rules={[{ required: true, message: '请选择签名' }]}>
          <Select
            loading={signatures.isPending}
            placeholder="选择已通过审核的签名"
            options={signatureList.map((s) => ({ value: s.id, label: `【${s.name}】` }))}
          />
        </Form.Item>
        <Form.Item name="templateId" label="模板" rules={[{ required: true, message: '请选择模板' }]}>
          <Select
            loading={templates.isPending}
            placeholder="选择已通过审核的模板"
            options={templateList.map((t) => ({ value: t.id, label: t.name }))}
          />
        </Form.Item>
        {template && templateVariables.length > 0 && (
          <fieldset className="mb-4 flex flex-col gap-2">
            <legend className="mb-2 text-sm">变量取值</legend>
            {templateVariables.map((name) => {
              const from = variableMap[name]?.from;
              return (
                <div key={name} className="flex items-start gap-2">
                  <span className="w-28 shrink-0 pt-1 font-mono text-sm">{`\${${name}}`}</span>
                  <Form.Item
                    className="mb-0 w-44"
                    name={['variableMap', name, 'from']}
                    rules={[{ required: true, message: `请为变量「${name}」选择取值来源` }]}
                  >
                    <Select
                      aria-label={`\${${name}} 的取值来源`}
                      placeholder="取值来源"
                      options={sourceOptions}
                    />
                  </Form.Item>
                  {from === 'call_variable' && (
                    <Form.Item
                      className="mb-0 flex-1"
                      name={['variableMap', name, 'name']}
                      rules={[{ required: true, whitespace: true, message: '请填写通话变量名' }]}
                    >
                      <AutoComplete
                        aria-label={`\${${name}} 的通话变量名`}
                        placeholder="通话变量名"
                        options={variableNames.map((v) => ({ value: v }))}
                      />
                    </Form.Item>
                  )}
                  {from === 'fixed' && (
                    <Form.Item
                      className="mb-0 flex-1"
                      name={['variableMap', name, 'value']}
                      rules={[
                        { required: true, whitespace: true, message: '请填写固定值' },
                        {
                          max: SMS_VARIABLE_MAX_LENGTH,
                          message: `固定值不能超过 ${SMS_VARIABLE_MAX_LENGTH} 个字符`,
                        },
                      ]}
                    >
                      <Input aria-label={`\${${name}} 的固定值`} placeholder="固定值" />
                    </Form.Item>
                  )}
                </div>
              );
            })}
          </fieldset>
        )}
        {template && (
          <section aria-label="短信预览" className="mb-4 rounded bg-gray-50 p-3 text-sm">
            <div className="mb-1 text-xs text-gray-500">
              预览（示例值）· 约 {smsParts(preview).length} 条计费
            </div>
            <div className="whitespace-pre-wrap break-all">{preview}</div>
          </section>
        )}
        <Form.Item name="enabled" label="启用" valuePropName="checked">
          <Switch />
        </Form.Item>
        {save.error && <Alert type="error" showIcon title={save.error.message} />}
      </Form>
    </Modal>
  );
}
