import { INBOUND_SIM_PERSONAS, SIM_PERSONA_LABELS } from '@callpilot/contracts';
import { Form, Input, Select } from 'antd';
import type { ReactNode } from 'react';
import { useStartTestInboundCall } from '../api/start-test-inbound-call';
import { LiveCallDialog } from './live-call-dialog';

type InboundPersona = (typeof INBOUND_SIM_PERSONAS)[number];
type FormValues = { number: string; persona: InboundPersona; callerNumber: string };

/** A number a simulated caller may dial, with what the dialog shows about it. */
export type DialableNumber = { number: string; label: string; assistantName: string | null };

const personaOptions = INBOUND_SIM_PERSONAS.map((value) => ({ value, label: SIM_PERSONA_LABELS[value] }));

const numberLabel = ({ number, label, assistantName }: DialableNumber) =>
  [number, label, assistantName ? `由「${assistantName}」接听` : '未绑定'].filter(Boolean).join(' · ');

/**
 * 模拟来电: a simulated caller (a persona) dials one of the project's numbers; the call is routed
 * as a real inbound call and shown live. With no number to dial, `empty` says why and where to go.
 */
export function InboundTestCallDialog({
  open,
  onClose,
  projectId,
  numbers,
  empty,
  note,
}: {
  open: boolean;
  onClose: () => void;
  projectId: string;
  numbers: DialableNumber[];
  /** Shown instead of the form when there is no number to dial. */
  empty?: ReactNode;
  /** A line about who will answer, under the introduction. */
  note?: ReactNode;
}) {
  const [form] = Form.useForm<FormValues>();
  const start = useStartTestInboundCall(projectId);

  const begin = async () => {
    const values = await form.validateFields();
    const { callId } = await start.mutateAsync({
      number: values.number,
      persona: values.persona,
      callerNumber: values.callerNumber?.trim() ?? '',
    });
    return callId;
  };

  return (
    <LiveCallDialog
      title="模拟来电"
      open={open}
      onClose={onClose}
      projectId={projectId}
      onStart={begin}
      starting={start.isPending}
      startDisabled={numbers.length === 0}
    >
      {numbers.length === 0 ? (
        empty
      ) : (
        <Form<FormValues>
          form={form}
          layout="vertical"
          initialValues={{ number: numbers[0]?.number, persona: 'interested', callerNumber: '' }}
        >
          <p className="mb-4 text-sm text-gray-500">
            一位虚拟客户拨打项目号码，来电按号码的呼入设置接听，通话按真实节奏进行，结束后生成通话记录。
            {note}
          </p>
          <Form.Item name="number" label="被叫号码" rules={[{ required: true, message: '请选择被叫号码' }]}>
            <Select
              aria-label="被叫号码"
              disabled={numbers.length === 1}
              options={numbers.map((candidate) => ({
                value: candidate.number,
                label: numberLabel(candidate),
              }))}
            />
          </Form.Item>
          <Form.Item name="persona" label="模拟客户" rules={[{ required: true, message: '请选择模拟客户' }]}>
            <Select aria-label="模拟客户" options={personaOptions} />
          </Form.Item>
          <Form.Item
            name="callerNumber"
            label="主叫号码（可选）"
            rules={[{ pattern: /^$|^1[3-9]\d{9}$/, message: '主叫号码须为 11 位手机号' }]}
          >
            <Input aria-label="主叫号码" placeholder="不填则使用随机手机号" maxLength={11} />
          </Form.Item>
        </Form>
      )}
    </LiveCallDialog>
  );
}
