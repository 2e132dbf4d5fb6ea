import {
  type AssistantDetail,
  referencedVariables,
  SIM_PERSONA_LABELS,
  type SimPersona,
} from '@callpilot/contracts';
import { Form, Input, Select } from 'antd';
import { useState } from 'react';
import { LiveCallDialog } from '@/entities/call/components/live-call-dialog';
import { useAssistantVersions } from '../api/get-assistant-versions';
import { useStartTestCall } from '../api/start-test-call';

type FormValues = { persona: SimPersona; calleeNumber: string; version: number };

const personaOptions = (Object.entries(SIM_PERSONA_LABELS) as [SimPersona, string][]).map(
  ([value, label]) => ({ value, label }),
);

function initialVariables(assistant: AssistantDetail): Record<string, string> {
  const values: Record<string, string> = {};
  for (const variable of assistant.config.variables) values[variable.name] = variable.sample;
  const { openingLine, systemPrompt } = assistant.config;
  for (const name of referencedVariables(`${openingLine}\n${systemPrompt}`)) values[name] ??= '';
  return values;
}

/**
 * 模拟通话: places a call from this assistant to a simulated callee and shows it live, as a
 * real call would run (ringing, the carrier's outcome, turns, the analysis afterwards).
 */
export function AssistantTestCall({
  open,
  onClose,
  projectId,
  assistant,
  dirty,
}: {
  open: boolean;
  onClose: () => void;
  projectId: string;
  assistant: AssistantDetail;
  dirty: boolean;
}) {
  const [form] = Form.useForm<FormValues>();
  const [variables, setVariables] = useState(() => initialVariables(assistant));
  const start = useStartTestCall(projectId);
  const versions = useAssistantVersions(projectId, assistant.id, open);

  const begin = async () => {
    const values = await form.validateFields();
    const { callId } = await start.mutateAsync({
      assistantId: assistant.id,
      persona: values.persona,
      calleeNumber: values.calleeNumber?.trim() ?? '',
      variables,
      ...(values.version > 0 ? { version: values.version } : {}),
    });
    return callId;
  };

  const versionOptions = [
    { value: 0, label: dirty ? '草稿（已保存的配置）' : '草稿' },
    ...(versions.data ?? []).map((version) => ({
      value: version.version,
      label: `v${version.version}${version.note ? ` · ${version.note}` : ''}`,
    })),
  ];

  return (
    <LiveCallDialog
      title="模拟通话"
      open={open}
      onClose={onClose}
      projectId={projectId}
      onStart={begin}
      starting={start.isPending}
    >
      <Form<FormValues>
        form={form}
        layout="vertical"
        initialValues={{ persona: 'interested', calleeNumber: '', version: 0 }}
      >
        <p className="mb-4 text-sm text-gray-500">
          在模拟线路上呼叫一位虚拟客户，通话按真实节奏进行，结束后生成通话记录。
        </p>
        <Form.Item name="persona" label="模拟客户" rules={[{ required: true, message: '请选择模拟客户' }]}>
          <Select aria-label="模拟客户" options={personaOptions} />
        </Form.Item>
        <Form.Item
          name="calleeNumber"
          label="被叫号码（可选）"
          rules={[{ pattern: /^$|^1[3-9]\d{9}$/, message: '被叫号码须为 11 位手机号' }]}
        >
          <Input aria-label="被叫号码" placeholder="不填则使用模拟号码" maxLength={11} />
        </Form.Item>
        <Form.Item name="version" label="版本">
          <Select aria-label="版本" options={versionOptions} loading={versions.isPending} />
        </Form.Item>
        {Object.keys(variables).length > 0 && (
          <fieldset className="flex flex-col gap-2">
            <legend className="mb-2 text-sm text-gray-700">变量</legend>
            {Object.entries(variables).map(([name, value]) => (
              <div key={name} className="grid grid-cols-[8rem_1fr] items-center gap-2 text-sm">
                <span className="truncate text-gray-500" aria-hidden="true">
                  {name}
                </span>
                <Input
                  aria-label={`变量 ${name}`}
                  value={value}
                  maxLength={200}
                  onChange={(event) =>
                    setVariables((current) => ({ ...current, [name]: event.target.value }))
                  }
                />
              </div>
            ))}
          </fieldset>
        )}
      </Form>
    </LiveCallDialog>
  );
}
